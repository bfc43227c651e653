import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { projectExecutorResultForLookup } from '../core/executors/lookup-projection.js';
import { ExecutorGeneration, ResumeSecret } from '../plugins/executor.js';
import { WireId } from './schemas.js';

const Payload = Type.Object(
  { executor_id: WireId, executor_generation: ExecutorGeneration, resume_secret: ResumeSecret },
  { additionalProperties: false },
);

const Result = Type.Object({ executor_id: Type.String(), executor_generation: Type.Integer() });

/** `executor.rotate_confirm`: the pending candidate becomes the only proof; the generation stays. */
const executorRotateConfirm: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.rotate_confirm',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: {
        wire: {
          session: 'null',
          control: 'null',
          operation: 'required',
          profile: true,
          retain: projectExecutorResultForLookup,
        },
      },
    },
    async (request) =>
      fastify.executors.rotateConfirm(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorRotateConfirm;
