import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionControl } from './recovery-rights.js';
import { EmptyPayload } from './schemas.js';

export const Result = Type.Object({ status: Type.Union([Type.Literal('closing'), Type.Literal('closed')]) });

/** `session.close`: ends the caller's control, cancelling an active turn; idempotent for its token. */
const sessionClose: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.close',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      // The token that closed the session may repeat the close, so the method judges the token itself.
      config: {
        wire: {
          session: 'required',
          control: 'required',
          operation: 'required',
          authorize: false,
          recovery: sessionControl(fastify),
        },
      },
    },
    async (request) => {
      const { envelope, connection } = request.wire;
      const sessionId = envelope.session_id!;
      // The controller keeps control while the session's title is being made (at most until the title's
      // deadline), so once a close has answered, the session's title no longer changes.
      if (fastify.sessions.controls(sessionId, envelope.control_token, connection)) {
        await fastify.titles?.settled(sessionId);
      }
      const status = fastify.sessions.close(sessionId, envelope.control_token, connection);
      // Closing a session with an active turn cancels it; its terminal is recorded, and the next claim
      // sees it in its snapshot (the closing token no longer receives events).
      if (status === 'closed' && fastify.turns.cancelForClose(sessionId))
        return { status: 'closing' as const };
      return { status };
    },
  );
};

export default sessionClose;
