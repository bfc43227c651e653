import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EXECUTOR_METHOD } from './executor-schemas.js';
import { EmptyPayload } from './schemas.js';

export const Result = Type.Object({
  executor_id: Type.String(),
  executor_generation: Type.Literal(1),
  resume_secret: Type.String(),
});

/**
 * `executor.create`: a provisional executor held by this connection, to be confirmed from it within
 * 60 seconds. The only response that discloses the first resume secret; a lost reply cannot recover it.
 */
const executorCreate: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/executor.create',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: EXECUTOR_METHOD },
    },
    async (request) => fastify.executors.create(fastify.executorConnection(request.wire.connection)),
  );
};

export default executorCreate;
