import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import type { TLocalizedValidationError } from 'typebox/error';
import {
  type OAuthConfig,
  OAuthConfigError,
  type OAuthSettings,
  readOAuthConfig,
} from '../core/auth/oauth-config.js';
import type { McpServerEntry } from '../core/mcp/mcp-types.js';
import { NO_PROVIDERS, type ProvidersSection } from '../core/provider/provider-definition.js';
import { type BuiltinToolName, ENABLEABLE_BUILTIN_TOOLS } from '../core/resources/builtin-tools.js';
import { headerNameProblem } from './header-names.js';
import { readMcpServers } from './mcp-servers-config.js';
import { ProvidersConfigError, readProviders } from './providers-config.js';

export const CONFIG_FILE_NAME = 'config.json';

/** Bounds of `tools.run_command`: so many readable paths at most, and the least memory and processes a command may get. */
const RUN_COMMAND_READABLE_PATHS_MAX = 64;
const RUN_COMMAND_MEMORY_BYTES_MIN = 64 * 1024 * 1024;
const RUN_COMMAND_PROCESSES_MIN = 16;
const RUN_COMMAND_PROCESSES_MAX = 65_536;

/**
 * Only the fields the daemon reads are checked. Objects stay open at every level so fields the daemon does
 * not know (or no longer knows) are carried through rather than refused.
 */
const DisabledNames = Type.Object({ disabled: Type.Optional(Type.Array(Type.String())) });
/** Header values are visible ASCII, spaces and tabs, so that no value can split a request. */
const HEADER_VALUE = '^[\\t\\x20-\\x7e]*$';
/** An absolute http(s) URL; the OAuth configuration refuses anything else (`core/auth/oauth-config.ts`). */
const OAuthUrl = Type.String({ minLength: 1, maxLength: 2048 });
const OAuthOptions = Type.Object({
  issuer: Type.Optional(OAuthUrl),
  authorization_endpoint: Type.Optional(OAuthUrl),
  token_endpoint: Type.Optional(OAuthUrl),
  client_id: Type.String({ minLength: 1, maxLength: 512 }),
  scopes: Type.Optional(
    Type.Array(Type.String({ pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' }), { maxItems: 64 }),
  ),
  authorization_parameters: Type.Optional(Type.Record(Type.String(), Type.String({ maxLength: 2048 }))),
  login_timeout_ms: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 3_600_000 })),
});
const ProviderOptions = Type.Object({
  oauth: Type.Optional(OAuthOptions),
  headers: Type.Optional(Type.Record(Type.String(), Type.String({ pattern: HEADER_VALUE }))),
  stream_usage: Type.Optional(Type.Boolean()),
  assistant_tool_call_content: Type.Optional(Type.Enum(['empty', 'null'])),
  reasoning_summary: Type.Optional(Type.Boolean()),
});
const ToolOptions = Type.Object({
  disabled: Type.Optional(Type.Array(Type.String())),
  enabled: Type.Optional(Type.Array(Type.Enum([...ENABLEABLE_BUILTIN_TOOLS]))),
  web_fetch: Type.Optional(Type.Object({ allow_private_addresses: Type.Optional(Type.Boolean()) })),
  run_command: Type.Optional(
    Type.Object({
      readable_paths: Type.Optional(
        Type.Array(Type.String({ minLength: 1 }), { maxItems: RUN_COMMAND_READABLE_PATHS_MAX }),
      ),
      memory_bytes: Type.Optional(Type.Integer({ minimum: RUN_COMMAND_MEMORY_BYTES_MIN })),
      processes: Type.Optional(
        Type.Integer({ minimum: RUN_COMMAND_PROCESSES_MIN, maximum: RUN_COMMAND_PROCESSES_MAX }),
      ),
    }),
  ),
});
const ConfigFileSchema = Type.Object({
  skills: Type.Optional(DisabledNames),
  tools: Type.Optional(ToolOptions),
  provider: Type.Optional(ProviderOptions),
});
const configFileValidator = Compile(ConfigFileSchema);

/** A section that lists names the daemon keeps out of use; its other fields are carried through. */
export interface DisabledSection {
  readonly disabled: readonly string[];
  readonly [field: string]: unknown;
}

/**
 * Which of the daemon's own tools the model is offered: the ones on by default and those `enabled` turns
 * on, less every `disabled` name (which also keeps application resources from taking it).
 */
export interface ToolsSection extends DisabledSection {
  readonly enabled: readonly BuiltinToolName[];
  readonly web_fetch: { readonly allow_private_addresses: boolean; readonly [field: string]: unknown };
  readonly run_command: RunCommandSection;
}

/** What commands may read of the user's home beyond the defaults, and their bounds (null: the defaults). */
export interface RunCommandSection {
  readonly readable_paths: readonly string[];
  readonly memory_bytes: number | null;
  readonly processes: number | null;
  readonly [field: string]: unknown;
}

/** How requests to the model provider are shaped; its other fields are carried through. */
export interface ProviderSection {
  /** Sent with every provider request. Values may be secrets: they are never logged or echoed. */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether to ask for token usage (`stream_options.include_usage`); some servers refuse it. */
  readonly stream_usage: boolean;
  /** The `content` of an assistant message that only calls tools: `""` or `null`. */
  readonly assistant_tool_call_content: 'empty' | 'null';
  /**
   * The provider streams reasoning summaries in OpenRouter's documented `reasoning_details` shape: only
   * then are they read, and `provider_reasoning_summary` offered to clients. Off unless configured.
   */
  readonly reasoning_summary: boolean;
  /** Signing in through the browser (`auth.login {method:"oauth"}`); null when not configured. */
  readonly oauth: OAuthConfig | null;
  readonly [field: string]: unknown;
}

/**
 * The loaded configuration. Known fields are filled with their defaults; unknown fields, at the top level
 * and inside known sections, are passed through untouched. The daemon never writes the file back.
 */
export interface DaemonConfig {
  readonly skills: DisabledSection;
  readonly tools: ToolsSection;
  /**
   * The MCP servers of `mcp_servers` (or `mcpServers`), by key in the file's order, each usable or refused
   * with its reason (`mcp-servers-config.ts`); empty when none is configured.
   */
  readonly mcp_servers: Readonly<Record<string, McpServerEntry>>;
  readonly provider: ProviderSection;
  /** The named providers of `providers` and `default_provider` (`providers-config.ts`); none by default. */
  readonly provider_definitions: ProvidersSection;
  readonly [field: string]: unknown;
}

/** A config file the daemon refuses to start with. The message names the file and field, never a value. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';

  /** The JSON pointer of the offending field ('' for the whole document), or null when it is not a field. */
  readonly pointer: string | null;

  constructor(message: string, pointer: string | null = null) {
    super(`${CONFIG_FILE_NAME}: ${message}`);
    this.pointer = pointer;
  }
}

export function defaultConfig(): DaemonConfig {
  return {
    skills: { disabled: [] },
    tools: {
      disabled: [],
      enabled: [],
      web_fetch: { allow_private_addresses: false },
      run_command: { readable_paths: [], memory_bytes: null, processes: null },
    },
    mcp_servers: {},
    provider_definitions: NO_PROVIDERS,
    provider: {
      headers: {},
      stream_usage: true,
      assistant_tool_call_content: 'empty',
      reasoning_summary: false,
      oauth: null,
    },
  };
}

/** Reads `<home>/config.json`; a missing file means the defaults. */
export function loadConfigFile(home: string): DaemonConfig {
  const text = readConfigText(join(home, CONFIG_FILE_NAME));
  return text === null ? defaultConfig() : parseConfig(text);
}

/** Checks and normalises the text of a config file. */
export function parseConfig(text: string): DaemonConfig {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    // The parser's own message quotes the offending text, which may be a secret.
    throw new ConfigError('is not valid JSON');
  }
  const provider = isObject(document) ? document.provider : undefined;
  const headers = headerNameProblem(isObject(provider) ? provider.headers : undefined, '/provider/headers');
  if (headers) throw new ConfigError(headers.message, headers.pointer);
  // The MCP servers are read on their own: a wrong entry is refused by itself and never stops the daemon.
  const mcp = isObject(document) ? readMcpServers(document) : { ok: true as const, servers: {} };
  if (!mcp.ok) throw new ConfigError(mcp.message, mcp.pointer);
  const definitions = isObject(document) ? checkedProviders(document) : NO_PROVIDERS;
  const errors = configFileValidator.Errors(document);
  const first = errors[0];
  if (first) {
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more problems)` : '';
    throw new ConfigError(`${describeError(first)}${more}`, first.instancePath);
  }
  const file = document as Record<string, unknown> & {
    skills?: Record<string, unknown> & { disabled?: string[] };
    tools?: Record<string, unknown> & {
      disabled?: string[];
      enabled?: BuiltinToolName[];
      web_fetch?: Record<string, unknown> & { allow_private_addresses?: boolean };
      run_command?: Record<string, unknown> & {
        readable_paths?: string[];
        memory_bytes?: number;
        processes?: number;
      };
    };
    provider?: Record<string, unknown> & {
      headers?: Record<string, string>;
      stream_usage?: boolean;
      assistant_tool_call_content?: 'empty' | 'null';
      reasoning_summary?: boolean;
      oauth?: OAuthSettings;
    };
  };
  const { mcpServers: _claudeSection, ...rest } = file;
  return {
    ...rest,
    skills: { ...file.skills, disabled: [...(file.skills?.disabled ?? [])] },
    tools: {
      ...file.tools,
      disabled: [...(file.tools?.disabled ?? [])],
      enabled: [...(file.tools?.enabled ?? [])],
      web_fetch: {
        ...file.tools?.web_fetch,
        allow_private_addresses: file.tools?.web_fetch?.allow_private_addresses ?? false,
      },
      run_command: {
        ...file.tools?.run_command,
        readable_paths: [...(file.tools?.run_command?.readable_paths ?? [])],
        memory_bytes: file.tools?.run_command?.memory_bytes ?? null,
        processes: file.tools?.run_command?.processes ?? null,
      },
    },
    mcp_servers: mcp.servers,
    provider_definitions: definitions,
    provider: {
      ...file.provider,
      headers: { ...file.provider?.headers },
      stream_usage: file.provider?.stream_usage ?? true,
      assistant_tool_call_content: file.provider?.assistant_tool_call_content ?? 'empty',
      reasoning_summary: file.provider?.reasoning_summary ?? false,
      oauth: file.provider?.oauth === undefined ? null : checkedOAuth(file.provider.oauth),
    },
  };
}

function checkedProviders(document: Record<string, unknown>): ProvidersSection {
  try {
    return readProviders(document);
  } catch (error) {
    if (error instanceof ProvidersConfigError) throw new ConfigError(error.message, error.pointer);
    throw error;
  }
}

function checkedOAuth(settings: OAuthSettings): OAuthConfig {
  try {
    return readOAuthConfig(settings);
  } catch (error) {
    if (error instanceof OAuthConfigError) throw new ConfigError(error.message, error.pointer);
    throw error;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readConfigText(path: string): string | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unknown error'})`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ConfigError('is not valid UTF-8');
  }
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  boolean: 'a boolean',
  integer: 'an integer',
};

/**
 * Built from the field's pointer and the schema's expectation only. The pointer holds known field names
 * and array indexes: unknown fields are never checked, so never named.
 */
function describeError(error: TLocalizedValidationError): string {
  const field = error.instancePath === '' ? 'the document' : error.instancePath;
  if (error.keyword === 'type') {
    const expected = String(error.params.type);
    return `${field} must be ${TYPE_NAMES[expected] ?? expected}`;
  }
  if (error.keyword === 'enum') return `${field} is not one of the allowed values`;
  return `${field} is not valid`;
}
