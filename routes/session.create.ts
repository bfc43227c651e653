import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WireError } from '../core/errors.js';
import { SERVICE_LIMITS } from '../core/limits.js';
import { checkWorkspace } from '../core/sessions/workspace.js';

export const Payload = Type.Object(
  {
    workspace: Type.String({ minLength: 1, maxLength: SERVICE_LIMITS.workspace_path_bytes }),
    title: Type.Union([Type.String({ maxLength: SERVICE_LIMITS.title_bytes }), Type.Null()]),
  },
  { additionalProperties: false },
);

export const Result = Type.Object({ session_id: Type.String(), workspace: Type.String() });

/** `session.create`: a new durable session over an existing workspace directory that a sandbox can confine. */
const sessionCreate: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.create',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      const { title } = request.body;
      if (title !== null && Buffer.byteLength(title) > SERVICE_LIMITS.title_bytes) {
        throw new WireError('invalid_payload', 'the title is too long');
      }
      const checked = await checkWorkspace(request.body.workspace, fastify.home, fastify.hiddenPlaces);
      return fastify.sessions.create(checked, title);
    },
  );
};

export default sessionCreate;
