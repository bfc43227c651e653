import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXECUTOR_METHOD, ExecutorGeneration } from './executor-schemas.js';
import { WireId } from './schemas.js';

export const Payload = Type.Object(
  { executor_id: WireId, executor_generation: ExecutorGeneration },
  { additionalProperties: false },
);

export const Result = Type.Object({
  executor_id: Type.String(),
  executor_generation: Type.Integer(),
  resume_secret: Type.String(),
  status: Type.Literal('rotation_pending'),
  pending_timeout_ms: Type.Integer(),
});

/**
 * `executor.rotate`: a candidate resume secret beside the current one, pending for 60 seconds; a new
 * rotation replaces the candidate. The only response that discloses the candidate.
 */
const executorRotate: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.rotate',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: EXECUTOR_METHOD },
    },
    async (request) =>
      fastify.executors.rotate(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorRotate;
