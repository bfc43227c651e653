import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { EmptyPayload } from './schemas.js';

export const Result = Type.Object({
  negotiated_capabilities: Type.Array(Type.String()),
  capabilities: Type.Object({}, { additionalProperties: true }),
});

/**
 * `capabilities`: the connection's negotiated selection, unchanged for its life. The description is
 * serialized once per selection and sent as it is: Fastify never serializes a string reply again, so the
 * response schema only declares the result.
 */
const capabilities: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/capabilities',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request, reply) => {
      reply.type('application/json');
      // Already JSON of the Result's shape, sent as it is.
      return fastify.capabilityCatalog.of(request.wire.connection.negotiated).json as unknown as Static<
        typeof Result
      >;
    },
  );
};

export default capabilities;
