import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { sessionControl } from './recovery-rights.js';
import { WireId } from './schemas.js';
import { TURN_MUTATION } from './turn-schemas.js';

export const Payload = Type.Object({ turn_id: WireId }, { additionalProperties: false });
export const Result = Type.Object({ turn_id: Type.String(), status: Type.Literal('cancelling') });

/** `turn.stop`: cancels the session's active turn; its `turn.terminal` (cancelled) follows as an event. */
const turnStop: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/turn.stop',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { ...TURN_MUTATION, recovery: sessionControl(fastify) } },
    },
    async (request) => fastify.turns.stop(request.wire.envelope.session_id!, request.body.turn_id),
  );
};

export default turnStop;
