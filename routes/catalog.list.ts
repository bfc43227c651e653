import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CatalogResult } from './configuration-schemas.js';
import { EmptyPayload } from './schemas.js';

/** `catalog.list`: the models the last `catalog.refresh` found, from the cache; never the provider. */
const catalogList: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/catalog.list',
    {
      schema: { body: EmptyPayload, response: { 200: CatalogResult } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request) => {
      await fastify.enterConfiguration(request);
      return fastify.modelCatalog.snapshot;
    },
  );
};

export default catalogList;
