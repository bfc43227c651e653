import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { REGISTRY_MUTATION, UnregisterPayload, UnregisterResult } from './registry-schemas.js';

/** `session.resources.unregister`: removes a resource by its id and current revision. */
const sessionResourcesUnregister: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.resources.unregister',
    {
      schema: { body: UnregisterPayload, response: { 200: UnregisterResult } },
      config: { wire: REGISTRY_MUTATION },
    },
    async (request) => fastify.resources.unregister(request.wire.grant!.sessionId, request.body),
  );
};

export default sessionResourcesUnregister;
