import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import {
  MESSAGES_DEFAULTS,
  type ModelOptions,
  NO_PROVIDERS,
  PROVIDER_APIS,
  type ProviderDefinition,
  type ProvidersSection,
} from '../core/provider/provider-definition.js';
import { headerNameProblem } from './header-names.js';

/** A provider's name: what a model is prefixed with (`NAME/model`), so never a slash. */
const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const ENVIRONMENT_NAME = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
const HEADER_VALUE = '^[\\t\\x20-\\x7e]*$';
const MAX_TOKENS = { minimum: 1, maximum: 1_000_000 };

const DefinitionSchema = Type.Object({
  api: Type.Enum([...PROVIDER_APIS]),
  base_url: Type.String({ minLength: 1, maxLength: 2_048 }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String({ pattern: HEADER_VALUE }))),
  api_key_env: Type.Optional(Type.String({ pattern: ENVIRONMENT_NAME })),
  reasoning_summary: Type.Optional(Type.Boolean()),
  stream_usage: Type.Optional(Type.Boolean()),
  assistant_tool_call_content: Type.Optional(Type.Enum(['empty', 'null'])),
  max_tokens: Type.Optional(Type.Integer(MAX_TOKENS)),
  models: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object({
        max_tokens: Type.Optional(Type.Integer(MAX_TOKENS)),
        encrypted_reasoning: Type.Optional(Type.Boolean()),
        reasoning_summary: Type.Optional(Type.Boolean()),
      }),
    ),
  ),
  encrypted_reasoning: Type.Optional(Type.Boolean()),
  anthropic_version: Type.Optional(Type.String({ pattern: '^[\\x21-\\x7e]{1,64}$' })),
  auth: Type.Optional(Type.Enum(['x-api-key', 'bearer'])),
});
const definitionValidator = Compile(DefinitionSchema);

/** Members each API reads beyond the common ones; another API's member is refused, not ignored. */
const API_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  chat_completions: ['reasoning_summary', 'stream_usage', 'assistant_tool_call_content'],
  responses: ['reasoning_summary', 'encrypted_reasoning', 'models'],
  messages: ['max_tokens', 'models', 'anthropic_version', 'auth'],
};
const API_SPECIFIC = new Set(Object.values(API_MEMBERS).flat());
const API_SPECIFIC_MODEL = new Set(['max_tokens', 'encrypted_reasoning', 'reasoning_summary']);
/** The members of `models.<id>` each API reads. */
const MODEL_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  chat_completions: [],
  responses: ['encrypted_reasoning', 'reasoning_summary'],
  messages: ['max_tokens'],
};

/** Why `providers` or `default_provider` stops the daemon; names members, never values. */
export class ProvidersConfigError extends Error {
  constructor(
    message: string,
    readonly pointer: string,
  ) {
    super(message);
  }
}

type DefinitionDocument = {
  api: ProviderDefinition['api'];
  base_url: string;
  headers?: Record<string, string>;
  api_key_env?: string;
  reasoning_summary?: boolean;
  stream_usage?: boolean;
  assistant_tool_call_content?: 'empty' | 'null';
  max_tokens?: number;
  encrypted_reasoning?: boolean;
  models?: Record<
    string,
    { max_tokens?: number; encrypted_reasoning?: boolean; reasoning_summary?: boolean }
  >;
  anthropic_version?: string;
  auth?: 'x-api-key' | 'bearer';
};

/**
 * Reads `providers` (named provider definitions, in the file's order) and `default_provider` of a parsed
 * config file. Unknown members are carried through and ignored; a wrong one stops the daemon with its
 * pointer.
 */
export function readProviders(document: Record<string, unknown>): ProvidersSection {
  const { providers, default_provider: defaultProvider } = document;
  if (providers === undefined && defaultProvider === undefined) return NO_PROVIDERS;
  if (
    providers !== undefined &&
    (typeof providers !== 'object' || providers === null || Array.isArray(providers))
  ) {
    throw new ProvidersConfigError('/providers must be an object', '/providers');
  }
  const definitions = Object.entries((providers ?? {}) as Record<string, unknown>).map(([name, value]) =>
    readDefinition(name, value),
  );
  if (defaultProvider !== undefined) {
    if (
      typeof defaultProvider !== 'string' ||
      !definitions.some((definition) => definition.name === defaultProvider)
    ) {
      throw new ProvidersConfigError(
        '/default_provider does not name a provider of /providers',
        '/default_provider',
      );
    }
  }
  return { definitions, defaultProvider: (defaultProvider as string | undefined) ?? null };
}

function readDefinition(name: string, value: unknown): ProviderDefinition {
  const pointer = `/providers/${name}`;
  // The name is checked before anything names it in a message: it may be anything.
  if (!PROVIDER_NAME.test(name)) {
    throw new ProvidersConfigError(
      '/providers has a name that is not 1-32 lowercase letters, digits, "_" or "-"',
      '/providers',
    );
  }
  const headers = headerNameProblem(
    typeof value === 'object' && value !== null ? (value as Record<string, unknown>).headers : undefined,
    `${pointer}/headers`,
  );
  if (headers) throw new ProvidersConfigError(headers.message, headers.pointer);
  const first = definitionValidator.Errors(value)[0];
  if (first) {
    const at = `${pointer}${first.instancePath}`;
    throw new ProvidersConfigError(`${at} is not valid`, at);
  }
  const definition = value as DefinitionDocument;
  for (const member of Object.keys(definition)) {
    if (API_SPECIFIC.has(member) && !API_MEMBERS[definition.api]?.includes(member)) {
      throw new ProvidersConfigError(
        `${pointer}/${member} is not read by the ${definition.api} API`,
        `${pointer}/${member}`,
      );
    }
  }
  if (!isHttpUrl(definition.base_url)) {
    throw new ProvidersConfigError(`${pointer}/base_url is not an http or https URL`, `${pointer}/base_url`);
  }
  const modelOptions: Record<string, ModelOptions> = {};
  for (const [model, settings] of Object.entries(definition.models ?? {})) {
    for (const member of Object.keys(settings)) {
      const at = `${pointer}/models/${model}/${member}`;
      if (!MODEL_MEMBERS[definition.api]?.includes(member) && API_SPECIFIC_MODEL.has(member)) {
        throw new ProvidersConfigError(`${at} is not read by the ${definition.api} API`, at);
      }
    }
    modelOptions[model] = {
      ...(settings.max_tokens !== undefined ? { maxTokens: settings.max_tokens } : {}),
      ...(settings.encrypted_reasoning !== undefined
        ? { encryptedReasoning: settings.encrypted_reasoning }
        : {}),
      ...(settings.reasoning_summary !== undefined ? { reasoningSummary: settings.reasoning_summary } : {}),
    };
  }
  return {
    name,
    api: definition.api,
    baseUrl: definition.base_url,
    headers: { ...definition.headers },
    apiKeyEnv: definition.api_key_env ?? null,
    reasoningSummary: definition.reasoning_summary ?? false,
    streamUsage: definition.stream_usage ?? true,
    assistantToolCallContent: definition.assistant_tool_call_content ?? 'empty',
    encryptedReasoning: definition.encrypted_reasoning ?? true,
    modelOptions,
    maxTokens: definition.max_tokens ?? MESSAGES_DEFAULTS.maxTokens,
    anthropicVersion: definition.anthropic_version ?? MESSAGES_DEFAULTS.version,
    auth: definition.auth ?? 'x-api-key',
  };
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === ''
    );
  } catch {
    return false;
  }
}
