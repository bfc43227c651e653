import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXECUTOR_METHOD, ExecutorAttachResult, ResumeSecret } from './executor-schemas.js';
import { executorProof } from './recovery-rights.js';
import { WireId } from './schemas.js';

export const Payload = Type.Object(
  { executor_id: WireId, resume_secret: ResumeSecret },
  { additionalProperties: false },
);

/**
 * `executor.resume`: attaches the executor to this connection with the next generation, fencing the
 * connection that held it. The current proof cancels a pending rotation; the candidate promotes it.
 */
const executorResume: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.resume',
    {
      schema: { body: Payload, response: { 200: ExecutorAttachResult } },
      config: { wire: { ...EXECUTOR_METHOD, recovery: executorProof(fastify) } },
    },
    async (request) =>
      fastify.executors.resume(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorResume;
