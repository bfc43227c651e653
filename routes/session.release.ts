import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyPayload } from './schemas.js';

const Result = Type.Object({ released: Type.Literal(true) });

/** `session.release`: ends control without cancelling anything; the token stops working. */
const sessionRelease: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.release',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'required', control: 'required', operation: 'required' } },
    },
    async (request) => {
      fastify.sessions.release(request.wire.grant!);
      return { released: true as const };
    },
  );
};

export default sessionRelease;
