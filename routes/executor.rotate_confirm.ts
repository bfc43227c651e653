import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXECUTOR_METHOD, ExecutorGeneration, ResumeSecret } from './executor-schemas.js';
import { WireId } from './schemas.js';

export const Payload = Type.Object(
  { executor_id: WireId, executor_generation: ExecutorGeneration, resume_secret: ResumeSecret },
  { additionalProperties: false },
);

export const Result = Type.Object({ executor_id: Type.String(), executor_generation: Type.Integer() });

/** `executor.rotate_confirm`: the pending candidate becomes the only proof; the generation stays. */
const executorRotateConfirm: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.rotate_confirm',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: EXECUTOR_METHOD },
    },
    async (request) =>
      fastify.executors.rotateConfirm(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorRotateConfirm;
