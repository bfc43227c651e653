import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { WireError } from '../core/errors.js';
import { ProviderError } from '../core/provider/provider-error.js';
import { CatalogResult } from './configuration-schemas.js';
import { EmptyPayload } from './schemas.js';

/**
 * `catalog.refresh`: the one call that asks the provider for its models (`GET {base_url}/models`). The
 * allowlisted, bounded projection replaces the cache; a failure leaves the cache as it was.
 */
const catalogRefresh: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/catalog.refresh',
    {
      schema: { body: EmptyPayload, response: { 200: CatalogResult } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      await fastify.enterConfiguration(request);
      const listing = fastify.modelListing;
      if (!listing) throw new WireError('provider_unavailable');
      try {
        return await fastify.modelCatalog.replace(await listing.list(fastify.configurationDrain));
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        if (error.kind === 'credential_expired') throw new WireError('auth_expired');
        // The kind and status only: the provider's own text never reaches the log or the client.
        request.log.warn({ kind: error.kind, status: error.status }, 'the model catalog refresh failed');
        throw new WireError('provider_error', error.message);
      }
    },
  );
};

export default catalogRefresh;
