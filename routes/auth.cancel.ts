import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyPayload } from './schemas.js';

const Result = Type.Object({ cancelled: Type.Boolean() });

/**
 * `auth.cancel`: cancels the running OAuth login, from any connection, without waiting for the
 * configuration worker. `cancelled` is false when no login runs or its tokens are already being stored
 * (it then ends `completed`, or `failed` if they cannot be).
 */
const authCancel: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.cancel',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async () => ({ cancelled: fastify.oauthLogins?.cancel() ?? false }),
  );
};

export default authCancel;
