import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmptyPayload } from './schemas.js';

/**
 * `capabilities`: the connection's negotiated selection, unchanged for its life. The description is
 * serialized once per selection and sent as it is.
 */
const capabilities: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/capabilities',
    {
      // No response schema: the result is serialized once per selection and sent as it is.
      schema: { body: EmptyPayload },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request, reply) => {
      reply.type('application/json');
      return fastify.capabilityCatalog.of(request.wire.connection.negotiated).json;
    },
  );
};

export default capabilities;
