import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionControl } from './recovery-rights.js';
import { EmptyPayload } from './schemas.js';

const Result = Type.Object({ released: Type.Literal(true) });

/**
 * `session.release`: ends control without cancelling anything; the token stops working. While the
 * session's title is being made the release waits for it (at most until the title's deadline), so once it
 * has answered the title no longer changes.
 */
const sessionRelease: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.release',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: {
        wire: {
          session: 'required',
          control: 'required',
          operation: 'required',
          recovery: sessionControl(fastify),
        },
      },
    },
    async (request) => {
      await fastify.sessions.release(request.wire.grant!);
      return { released: true as const };
    },
  );
};

export default sessionRelease;
