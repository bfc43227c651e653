import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ClearPayload, ClearResult, REGISTRY_MUTATION } from './registry-schemas.js';

/** `session.resources.clear`: removes every resource; clearing an empty registry keeps its revision. */
const sessionResourcesClear: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.resources.clear',
    {
      schema: { body: ClearPayload, response: { 200: ClearResult } },
      config: { wire: REGISTRY_MUTATION },
    },
    async (request) => fastify.resources.clear(request.wire.grant!.sessionId, request.body),
  );
};

export default sessionResourcesClear;
