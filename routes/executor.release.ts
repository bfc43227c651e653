import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXECUTOR_METHOD, ExecutorGeneration } from './executor-schemas.js';
import { executorHeld } from './recovery-rights.js';
import { WireId } from './schemas.js';

export const Payload = Type.Object(
  { executor_id: WireId, executor_generation: ExecutorGeneration },
  { additionalProperties: false },
);

export const Result = Type.Object({
  executor_id: Type.String(),
  executor_generation: Type.Integer(),
  status: Type.Literal('released'),
});

/** `executor.release`: the executor is gone and both of its proofs stop working; no call moves elsewhere. */
const executorRelease: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.release',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { ...EXECUTOR_METHOD, recovery: executorHeld(fastify) } },
    },
    async (request) =>
      fastify.executors.release(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorRelease;
