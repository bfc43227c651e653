import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { describeCapabilities } from '../core/capabilities/describe.js';
import { EmptyPayload } from './schemas.js';

const Result = Type.Object({
  negotiated_capabilities: Type.Array(Type.String()),
  capabilities: Type.Object({}, { additionalProperties: true }),
});

/** `capabilities`: the connection's negotiated selection, unchanged for its life. */
const capabilities: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/capabilities',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request) => {
      const { negotiated } = request.wire.connection;
      return {
        negotiated_capabilities: [...negotiated],
        capabilities: describeCapabilities(negotiated, fastify.framing),
      };
    },
  );
};

export default capabilities;
