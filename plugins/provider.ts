import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ProviderSection } from '../config/config-file.js';
import { CredentialExpired } from '../core/auth/token-refresher.js';
import { PROVIDER_REASONING_SUMMARY } from '../core/capabilities/describe.js';
import type { Clock } from '../core/clock.js';
import { CONFIGURATION_LIMITS, PROVIDER_LIMITS } from '../core/limits.js';
import type { ChatProvider } from '../core/provider/chat-provider.js';
import { ModelListing } from '../core/provider/model-listing.js';
import { OpenAiChatProvider, type OpenAiChatProviderOptions } from '../core/provider/openai-chat-provider.js';
import { ProviderError } from '../core/provider/provider-error.js';

export interface ProviderSettings {
  /** Base URL of an OpenAI-compatible Chat Completions API, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string | null;
  /** The model turns use when no setting selects one. */
  model: string | null;
  /** Read from the environment, where it wins over a stored key; never logged, echoed or stored. */
  apiKey: string | null;
}

/** Adjustments of the provider adapter for tests: shorter bounds, a fixed jitter, a look at retries. */
export type ProviderTuning = Pick<OpenAiChatProviderOptions, 'limits' | 'random' | 'onRetry'>;

export interface ProviderPluginOptions {
  settings: ProviderSettings;
  /** The `provider` section of the config file. */
  config: ProviderSection;
  clock: Clock;
  tuning?: ProviderTuning;
}

export interface ProviderInfo {
  readonly kind: 'openai_chat_completions';
  /** Whether a base URL was given: turns can run once a model is selected too. */
  readonly endpointConfigured: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    provider: ProviderInfo;
    /** The model provider turns run against; null when no base URL is configured. */
    chatProvider: ChatProvider | null;
    /** The provider's `GET /models`, which only `catalog.refresh` calls; null without a base URL. */
    modelListing: ModelListing | null;
  }
}

/**
 * The model provider as configured at startup: its URL and headers are a snapshot for the daemon's life.
 * The model and its settings are chosen per turn, and the key is read at every request, so that
 * `settings.update` and `auth.login` apply without a restart.
 */
const provider: FastifyPluginAsync<ProviderPluginOptions> = async (
  fastify,
  { settings, config, clock, tuning },
) => {
  const { baseUrl } = settings;
  // Read at every request: a login or logout applies to the next one without a restart, and OAuth tokens
  // about to expire are refreshed first. Expired ones that cannot be refreshed are never sent.
  const apiKey = async () => {
    try {
      return await fastify.credentials.token();
    } catch (error) {
      if (error instanceof CredentialExpired) throw new ProviderError('credential_expired');
      throw error;
    }
  };
  fastify.decorate('provider', {
    kind: 'openai_chat_completions',
    endpointConfigured: baseUrl !== null,
  } satisfies ProviderInfo);
  if (baseUrl !== null && config.reasoning_summary)
    fastify.capabilityCatalog.offer(PROVIDER_REASONING_SUMMARY);
  fastify.decorate(
    'chatProvider',
    baseUrl === null
      ? null
      : new OpenAiChatProvider({
          baseUrl,
          apiKey,
          headers: config.headers,
          streamUsage: config.stream_usage,
          assistantToolCallContent: config.assistant_tool_call_content,
          reasoningSummary: config.reasoning_summary,
          clock,
          limits: tuning?.limits,
          random: tuning?.random,
          onRetry: (notice) => {
            // The kind and status only: the provider's own text never reaches the log.
            fastify.log.warn(
              { attempt: notice.attempt, delay_ms: notice.delayMs, kind: notice.kind, status: notice.status },
              'provider request failed; retrying',
            );
            tuning?.onRetry?.(notice);
          },
        }),
  );
  fastify.decorate(
    'modelListing',
    baseUrl === null
      ? null
      : new ModelListing({
          baseUrl,
          apiKey,
          headers: config.headers,
          clock,
          deadlineMs: tuning?.limits?.idle_timeout_ms ?? PROVIDER_LIMITS.idle_timeout_ms,
          responseBytes: CONFIGURATION_LIMITS.catalog_response_bytes,
        }),
  );
};

export default fp(provider, { name: 'provider', fastify: '5.x', dependencies: ['auth', 'framing'] });
