import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';

export interface ProviderSettings {
  /** Base URL of an OpenAI-compatible Chat Completions API, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string | null;
  model: string | null;
  /** Read from the environment; never logged, echoed or stored. */
  apiKey: string | null;
}

export interface ProviderInfo {
  readonly kind: 'openai_chat_completions';
  readonly model: string | null;
  readonly configured: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    provider: ProviderInfo;
  }
}

/** The model provider as configured at startup (the settings are a snapshot for the daemon's life). */
const provider: FastifyPluginAsync<{ settings: ProviderSettings }> = async (fastify, { settings }) => {
  fastify.decorate('provider', {
    kind: 'openai_chat_completions',
    model: settings.model,
    configured: settings.baseUrl !== null && settings.model !== null,
  } satisfies ProviderInfo);
};

export default fp(provider, { name: 'provider', fastify: '5.x' });
