import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { projectExecutorResultForLookup } from '../core/executors/lookup-projection.js';
import { ExecutorAttachResult, ResumeSecret } from '../plugins/executor.js';
import { WireId } from './schemas.js';

const Payload = Type.Object(
  { executor_id: WireId, resume_secret: ResumeSecret },
  { additionalProperties: false },
);

/** `executor.confirm`: the issuing connection confirms its provisional executor; the generation stays 1. */
const executorConfirm: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.confirm',
    {
      schema: { body: Payload, response: { 200: ExecutorAttachResult } },
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
      fastify.executors.confirm(fastify.executorConnection(request.wire.connection), request.body),
  );
};

export default executorConfirm;
