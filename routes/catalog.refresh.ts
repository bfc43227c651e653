import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ListingResult } from '../core/configuration/model-catalog.js';
import { WireError } from '../core/errors.js';
import { ProviderError } from '../core/provider/provider-error.js';
import { CatalogResult } from './configuration-schemas.js';
import { EmptyPayload } from './schemas.js';

/**
 * `catalog.refresh`: the one call that asks the providers for their models (`GET {base_url}/models` of
 * each, together). The allowlisted, bounded projection replaces the cache; a provider whose listing failed
 * keeps its cached models and is named in `failed`; when every one failed, nothing changes.
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
      const listings = fastify.modelListings;
      if (listings.length === 0) throw new WireError('provider_unavailable');
      const results: ListingResult[] = await Promise.all(
        listings.map(async ({ name, listing }): Promise<ListingResult> => {
          try {
            return { name, listing: await listing.list(fastify.configurationDrain) };
          } catch (error) {
            if (!(error instanceof ProviderError)) throw error;
            // The kind and status only: the provider's own text never reaches the log or the client.
            request.log.warn(
              { provider: name, kind: error.kind, status: error.status },
              'the model catalog refresh failed',
            );
            return { name, failure: error };
          }
        }),
      );
      try {
        const snapshot = await fastify.modelCatalog.replaceAll(results);
        const failed = results.flatMap((result) => ('failure' in result ? [result.name] : []));
        return failed.length > 0 ? { ...snapshot, failed } : snapshot;
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        if (error.kind === 'credential_expired') throw new WireError('auth_expired');
        throw new WireError('provider_error', error.message);
      }
    },
  );
};

export default catalogRefresh;
