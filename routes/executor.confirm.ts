import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXECUTOR_METHOD, ExecutorAttachResult, ResumeSecret } from './executor-schemas.js';
import { executorProof } from './recovery-rights.js';
import { WireId } from './schemas.js';

export const Payload = Type.Object(
  { executor_id: WireId, resume_secret: ResumeSecret },
  { additionalProperties: false },
);

/** `executor.confirm`: the issuing connection confirms its provisional executor; the generation stays 1. */
const executorConfirm: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.confirm',
    {
      schema: { body: Payload, response: { 200: ExecutorAttachResult } },
      config: { wire: { ...EXECUTOR_METHOD, recovery: executorProof(fastify) } },
    },
    async (request) =>
      fastify.executors.confirm(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorConfirm;
