import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ListResult, REGISTRY_READ } from './registry-schemas.js';
import { EmptyPayload } from './schemas.js';

/**
 * `session.resources.list`: the registry's revision and descriptors, sorted by kind then name, without
 * bodies or paths. The first list creates an empty registry with an unpredictable revision.
 */
const sessionResourcesList: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.resources.list',
    {
      schema: { body: EmptyPayload, response: { 200: ListResult } },
      config: { wire: REGISTRY_READ },
    },
    async (request) => fastify.resources.list(request.wire.grant!.sessionId),
  );
};

export default sessionResourcesList;
