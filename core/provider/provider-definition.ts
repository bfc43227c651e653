/** The provider APIs the daemon speaks natively. */
export const PROVIDER_APIS = ['chat_completions', 'responses', 'messages'] as const;
export type ProviderApi = (typeof PROVIDER_APIS)[number];

/** How `status` names an API. */
export const PROVIDER_KINDS: Readonly<Record<ProviderApi, string>> = {
  chat_completions: 'openai_chat_completions',
  responses: 'openai_responses',
  messages: 'anthropic_messages',
};

/** The Messages API's request defaults. */
export const MESSAGES_DEFAULTS = { maxTokens: 8_192, version: '2023-06-01' } as const;

/**
 * One named provider of `config.json`'s `providers`, read once at startup: its API, where it is, how it
 * is reached, and the settings its API takes. Models are selected on it as `NAME/model`.
 */
export interface ProviderDefinition {
  readonly name: string;
  readonly api: ProviderApi;
  /** E.g. `https://api.openai.com/v1`; each API adds its path. */
  readonly baseUrl: string;
  /** Sent with every request; values may be secrets. */
  readonly headers: Readonly<Record<string, string>>;
  /** The environment variable its key is read from at startup, or null. */
  readonly apiKeyEnv: string | null;
  /** Chat Completions: OpenRouter's documented `reasoning_details` are read. Responses: summaries are asked for. */
  readonly reasoningSummary: boolean;
  /** Chat Completions only. */
  readonly streamUsage: boolean;
  readonly assistantToolCallContent: 'empty' | 'null';
  /**
   * Responses only: asks for reasoning encrypted, to carry into the next round (`include`); models that do
   * not reason refuse it, so it can be turned off, for the provider or by model (`modelOptions`).
   */
  readonly encryptedReasoning: boolean;
  /** By model id: what one model needs apart from its provider's settings. */
  readonly modelOptions: Readonly<Record<string, ModelOptions>>;
  /** Messages only. */
  readonly maxTokens: number;
  readonly anthropicVersion: string;
  readonly auth: 'x-api-key' | 'bearer';
}

/** A model's own settings on its provider, each for one API (`models.<id>` of a definition). */
export interface ModelOptions {
  /** Messages: its `max_tokens`. */
  readonly maxTokens?: number;
  /** Responses: whether its reasoning is asked for encrypted. */
  readonly encryptedReasoning?: boolean;
  /** Responses: whether its reasoning summaries are asked for. */
  readonly reasoningSummary?: boolean;
}

/** `providers` and `default_provider` of `config.json`. */
export interface ProvidersSection {
  readonly definitions: readonly ProviderDefinition[];
  /** The provider bare model names select; null: the `provider` section's (`--provider-base-url`). */
  readonly defaultProvider: string | null;
}

export const NO_PROVIDERS: ProvidersSection = { definitions: [], defaultProvider: null };
