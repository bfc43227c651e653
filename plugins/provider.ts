import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ProviderSection } from '../config/config-file.js';
import type { ProviderSettings } from '../config/settings.js';
import type { CredentialStore } from '../core/auth/credential-store.js';
import { CredentialExpired } from '../core/auth/token-refresher.js';
import { PROVIDER_REASONING_SUMMARY } from '../core/capabilities/describe.js';
import type { Clock } from '../core/clock.js';
import { CONFIGURATION_LIMITS, PROVIDER_LIMITS } from '../core/limits.js';
import type { ChatProvider } from '../core/provider/chat-provider.js';
import { chatRequestHeaders } from '../core/provider/chat-request.js';
import { messagesRequestHeaders } from '../core/provider/messages/messages-request.js';
import { ModelListing } from '../core/provider/model-listing.js';
import { OpenAiChatProvider, type OpenAiChatProviderOptions } from '../core/provider/openai-chat-provider.js';
import { providerAdapter } from '../core/provider/provider-adapters.js';
import {
  PROVIDER_KINDS,
  type ProviderDefinition,
  type ProvidersSection,
} from '../core/provider/provider-definition.js';
import { ProviderError } from '../core/provider/provider-error.js';
import { ProviderRouter, type RoutedProvider } from '../core/provider/provider-router.js';

/** Adjustments of the provider adapters for tests: shorter bounds, a fixed jitter, a look at retries. */
export type ProviderTuning = Pick<OpenAiChatProviderOptions, 'limits' | 'random' | 'onRetry'>;

export interface ProviderPluginOptions {
  settings: ProviderSettings;
  /** The `provider` section of the config file. */
  config: ProviderSection;
  /** The named providers of the config file. */
  providers: ProvidersSection;
  clock: Clock;
  tuning?: ProviderTuning;
}

/** One provider's `GET /models`, and the prefix its models take in the catalog (none for the section's). */
export interface ProviderListing {
  name: string | null;
  listing: ModelListing;
}

export interface ProviderInfo {
  /** How `status` names the default provider's API. */
  readonly kind: string;
  /** Whether any provider is configured: turns can run once a model is selected too. */
  readonly endpointConfigured: boolean;
  /** Sends each round to the provider its model names; null when no provider is configured. */
  readonly router: ProviderRouter | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    provider: ProviderInfo;
    /** The model provider turns run against (the router); null when none is configured. */
    chatProvider: ChatProvider | null;
    /** Every provider's `GET /models`, which only `catalog.refresh` calls. */
    modelListings: ProviderListing[];
  }
}

/**
 * The model providers as configured at startup: the `provider` section's (`--provider-base-url`, Chat
 * Completions) and each named definition, a snapshot for the daemon's life. The model and its settings are
 * chosen per turn, and each provider's key is read at every request, so that `settings.update` and
 * `auth.login` apply without a restart.
 */
const provider: FastifyPluginAsync<ProviderPluginOptions> = async (
  fastify,
  { settings, config, providers, clock, tuning },
) => {
  const common = {
    clock,
    limits: tuning?.limits,
    random: tuning?.random,
    onRetry: (notice: Parameters<NonNullable<ProviderTuning['onRetry']>>[0]) => {
      // The kind and status only: the provider's own text never reaches the log.
      fastify.log.warn(
        { attempt: notice.attempt, delay_ms: notice.delayMs, kind: notice.kind, status: notice.status },
        'provider request failed; retrying',
      );
      tuning?.onRetry?.(notice);
    },
  };
  const credentials = fastify.providerCredentials;
  // Read at every request: a login or logout applies to the next one without a restart, and OAuth tokens
  // about to expire are refreshed first. Expired ones that cannot be refreshed are never sent.
  const keyOf = (store: CredentialStore) => async () => {
    try {
      return await store.token();
    } catch (error) {
      if (error instanceof CredentialExpired) throw new ProviderError('credential_expired');
      throw error;
    }
  };
  const section: RoutedProvider | null =
    settings.baseUrl === null
      ? null
      : {
          name: null,
          api: 'chat_completions',
          adapter: new OpenAiChatProvider({
            ...common,
            baseUrl: settings.baseUrl,
            apiKey: keyOf(credentials.section),
            headers: config.headers,
            streamUsage: config.stream_usage,
            assistantToolCallContent: config.assistant_tool_call_content,
            reasoningSummary: config.reasoning_summary,
          }),
        };
  const named: RoutedProvider[] = providers.definitions.map((definition) => ({
    name: definition.name,
    api: definition.api,
    adapter: providerAdapter(definition, { ...common, apiKey: keyOf(credentials.of(definition.name)) }),
  }));
  const defaultProvider =
    providers.defaultProvider === null
      ? section
      : (named.find((routed) => routed.name === providers.defaultProvider) ?? null);
  if (section !== null && providers.defaultProvider !== null) {
    fastify.log.warn(
      { default_provider: providers.defaultProvider },
      'default_provider is set: models without a provider name run on it, not on --provider-base-url',
    );
  }
  const router = section === null && named.length === 0 ? null : new ProviderRouter(defaultProvider, named);
  fastify.decorate('provider', {
    kind: PROVIDER_KINDS[defaultProvider?.api ?? 'chat_completions'],
    endpointConfigured: router !== null,
    router,
  } satisfies ProviderInfo);
  const summaries =
    (settings.baseUrl !== null && config.reasoning_summary) ||
    providers.definitions.some((definition) => definition.reasoningSummary);
  if (summaries) fastify.capabilityCatalog.offer(PROVIDER_REASONING_SUMMARY);
  fastify.decorate('chatProvider', router);

  const listing = (
    baseUrl: string,
    store: CredentialStore,
    headers: (key: string | null) => Record<string, string>,
  ) =>
    new ModelListing({
      baseUrl,
      apiKey: keyOf(store),
      headers,
      clock,
      deadlineMs: tuning?.limits?.idle_timeout_ms ?? PROVIDER_LIMITS.idle_timeout_ms,
      responseBytes: CONFIGURATION_LIMITS.catalog_response_bytes,
    });
  const listings: ProviderListing[] = [];
  if (settings.baseUrl !== null) {
    listings.push({
      name: null,
      listing: listing(settings.baseUrl, credentials.section, (key) =>
        chatRequestHeaders(key, config.headers),
      ),
    });
  }
  for (const definition of providers.definitions) {
    listings.push({
      name: definition.name,
      listing: listing(definition.baseUrl, credentials.of(definition.name), listingHeaders(definition)),
    });
  }
  fastify.decorate('modelListings', listings);
};

/** The headers of a definition's `GET /models`: its API's key header and its configured headers. */
function listingHeaders(definition: ProviderDefinition): (key: string | null) => Record<string, string> {
  if (definition.api !== 'messages') return (key) => chatRequestHeaders(key, definition.headers);
  return (key) =>
    messagesRequestHeaders(key, definition.headers, {
      version: definition.anthropicVersion,
      auth: definition.auth,
    });
}

export default fp(provider, { name: 'provider', fastify: '5.x', dependencies: ['auth', 'framing'] });
