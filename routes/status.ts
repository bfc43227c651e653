import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyPayload } from './schemas.js';

const Result = Type.Object({
  ready: Type.Boolean(),
  provider: Type.Object({
    kind: Type.String(),
    model: Type.Union([Type.String(), Type.Null()]),
    configured: Type.Boolean(),
  }),
  sessions: Type.Integer(),
  active_turns: Type.Integer(),
});

/** `status`: readiness, computed from memory and one read of the store; no network, no writes. */
const status: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/status',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async () => {
      const provider = fastify.provider;
      return {
        ready: provider.configured,
        provider: { kind: provider.kind, model: provider.model, configured: provider.configured },
        sessions: fastify.history.countSessions(),
        active_turns: fastify.turns.activeCount,
      };
    },
  );
};

export default status;
