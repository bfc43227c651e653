import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { ProviderSection } from '../config/config-file.js';
import { PROVIDER_REASONING_SUMMARY } from '../core/capabilities/describe.js';
import type { Clock } from '../core/clock.js';
import type { ChatProvider } from '../core/provider/chat-provider.js';
import { OpenAiChatProvider, type OpenAiChatProviderOptions } from '../core/provider/openai-chat-provider.js';

export interface ProviderSettings {
  /** Base URL of an OpenAI-compatible Chat Completions API, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string | null;
  model: string | null;
  /** Read from the environment; never logged, echoed or stored. */
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
  readonly model: string | null;
  readonly configured: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    provider: ProviderInfo;
    /** The model provider turns run against; null when no base URL or model is configured. */
    chatProvider: ChatProvider | null;
  }
}

/** The model provider as configured at startup (the settings are a snapshot for the daemon's life). */
const provider: FastifyPluginAsync<ProviderPluginOptions> = async (
  fastify,
  { settings, config, clock, tuning },
) => {
  const { baseUrl, model } = settings;
  const configured = baseUrl !== null && model !== null;
  fastify.decorate('provider', {
    kind: 'openai_chat_completions',
    model,
    configured,
  } satisfies ProviderInfo);
  if (configured && config.reasoning_summary) fastify.capabilityCatalog.offer(PROVIDER_REASONING_SUMMARY);
  fastify.decorate(
    'chatProvider',
    baseUrl === null || model === null
      ? null
      : new OpenAiChatProvider({
          baseUrl,
          model,
          apiKey: settings.apiKey,
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
};

export default fp(provider, { name: 'provider', fastify: '5.x', dependencies: ['framing'] });
