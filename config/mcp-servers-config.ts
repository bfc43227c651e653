import { MCP_LIMITS } from '../core/mcp/mcp-limits.js';
import type { McpServerConfig, McpServerEntry } from '../core/mcp/mcp-types.js';
import { isWellFormedText } from '../core/resources/unicode.js';

/** Where MCP servers are configured: the daemon's own member, or the one Claude Code and others use. */
const SECTIONS = ['mcp_servers', 'mcpServers'] as const;

/** The members the daemon reads, whatever the transport; the others are per transport. */
const COMMON_MEMBERS = [
  'type',
  'enabled',
  'timeout_ms',
  'startup_timeout_sec',
  'startup_timeout_ms',
  'tool_timeout_sec',
  'enabled_tools',
  'disabled_tools',
];
const STDIO_MEMBERS = ['command', 'args', 'env', 'cwd'];
const HTTP_MEMBERS = ['url', 'headers', 'http_headers'];

const TIMEOUT_MS_DEFAULT = MCP_LIMITS.timeout_ms_default;
const TIMEOUT_RANGE = `${MCP_LIMITS.timeout_ms_min}–${MCP_LIMITS.timeout_ms_max}`;

/** An HTTP token (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, spaces and tabs: no value can split a request. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
/** Headers that frame the request or the MCP session; the SDK sets `accept` and `content-type` itself. */
const RESERVED_HEADERS = new Set([
  'connection',
  'content-length',
  'expect',
  'host',
  'keep-alive',
  'mcp-protocol-version',
  'mcp-session-id',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** The section read, or why the whole file is refused (naming members, never values). */
export type McpSectionReading =
  | { ok: true; servers: Record<string, McpServerEntry> }
  | { ok: false; message: string; pointer: string };

/**
 * Reads `mcp_servers` or `mcpServers` of a parsed config file. Only the section itself can stop the
 * daemon (both present, or not an object); each entry is read on its own, and one that is wrong is kept as
 * refused with a one-line reason that names members, never values (an `env` value or a header may be a
 * secret).
 */
export function readMcpServers(document: Record<string, unknown>): McpSectionReading {
  const present = SECTIONS.filter((section) => document[section] !== undefined);
  if (present.length > 1) {
    return {
      ok: false,
      message: '/mcp_servers and /mcpServers are both present; keep one',
      pointer: '',
    };
  }
  const section = present[0];
  if (section === undefined) return { ok: true, servers: {} };
  const servers = document[section];
  if (!isObject(servers))
    return { ok: false, message: `/${section} must be an object`, pointer: `/${section}` };
  const entries: Record<string, McpServerEntry> = {};
  for (const [key, value] of Object.entries(servers)) {
    const characters = [...key];
    if (characters.length > MCP_LIMITS.server_name_characters) {
      entries[`${characters.slice(0, MCP_LIMITS.server_name_characters).join('')}…`] = {
        refused: `its name is over ${MCP_LIMITS.server_name_characters} characters`,
      };
    } else if (key === '' || CONTROL.test(key) || !isWellFormedText(key)) {
      entries[key] = { refused: 'its name must be 1–64 characters without control characters' };
    } else {
      entries[key] = readEntry(value);
    }
  }
  return { ok: true, servers: entries };
}

class Refusal extends Error {}

function refuse(reason: string): never {
  throw new Refusal(reason);
}

function readEntry(value: unknown): McpServerEntry {
  try {
    if (!isObject(value)) refuse('its entry must be an object');
    return read(value);
  } catch (error) {
    if (error instanceof Refusal) return { refused: error.message };
    throw error;
  }
}

function read(entry: Record<string, unknown>): McpServerEntry {
  const type = transportOf(entry);
  const known = new Set([...COMMON_MEMBERS, ...(type === 'stdio' ? STDIO_MEMBERS : HTTP_MEMBERS)]);
  const unread = Object.keys(entry).filter((member) => !known.has(member));
  const common = {
    ...timeouts(entry),
    enabled: optionalBoolean(entry, 'enabled') ?? true,
    enabled_tools: optionalStrings(entry, 'enabled_tools'),
    disabled_tools: optionalStrings(entry, 'disabled_tools') ?? [],
  };
  let config: McpServerConfig;
  if (type === 'stdio') {
    const cwd = optionalString(entry, 'cwd');
    if (cwd !== undefined && !cwd.startsWith('/')) refuse('cwd must be an absolute path');
    config = {
      type,
      command: requiredString(entry, 'command'),
      args: optionalStrings(entry, 'args') ?? [],
      env: stringMap(entry, 'env', checkEnvName),
      cwd: cwd ?? null,
      ...common,
    };
  } else {
    config = { type, url: httpUrl(entry), headers: headersOf(entry), ...common };
  }
  return { config, unread: listed(unread), unexpanded: listed(unexpanded(config)) };
}

function transportOf(entry: Record<string, unknown>): 'stdio' | 'http' {
  const { type } = entry;
  if (type === 'stdio' || type === 'http') return type;
  if (type === 'sse') {
    refuse('type "sse" (the protocol\'s old HTTP transport) is not supported; give its Streamable HTTP url');
  }
  if (type !== undefined) refuse('type must be "stdio" or "http"');
  const hasCommand = entry.command !== undefined;
  const hasUrl = entry.url !== undefined;
  if (hasCommand && hasUrl) refuse('it has both command and url; say which with type');
  if (hasCommand) return 'stdio';
  if (hasUrl) return 'http';
  return refuse('it has neither command nor url');
}

/** The start and call deadlines: Codex's members first, then `timeout_ms` for both, then the default. */
function timeouts(entry: Record<string, unknown>): { start_timeout_ms: number; call_timeout_ms: number } {
  const both = milliseconds(entry, 'timeout_ms', 1);
  const startSeconds = milliseconds(entry, 'startup_timeout_sec', 1_000);
  const startMs = milliseconds(entry, 'startup_timeout_ms', 1);
  if (startSeconds !== undefined && startMs !== undefined) {
    refuse('it has both startup_timeout_sec and startup_timeout_ms; keep one');
  }
  return {
    start_timeout_ms: startSeconds ?? startMs ?? both ?? TIMEOUT_MS_DEFAULT,
    call_timeout_ms: milliseconds(entry, 'tool_timeout_sec', 1_000) ?? both ?? TIMEOUT_MS_DEFAULT,
  };
}

/** A member counted in units of `unit` milliseconds, as whole milliseconds within the timeout range. */
function milliseconds(entry: Record<string, unknown>, member: string, unit: number): number | undefined {
  const value = entry[member];
  if (value === undefined) return undefined;
  const ms = typeof value === 'number' ? Math.round(value * unit) : Number.NaN;
  if (!(ms >= MCP_LIMITS.timeout_ms_min && ms <= MCP_LIMITS.timeout_ms_max)) {
    refuse(`${member} must be a number giving ${TIMEOUT_RANGE} ms`);
  }
  return ms;
}

function requiredString(entry: Record<string, unknown>, member: string): string {
  const value = optionalString(entry, member);
  if (value === undefined || value === '') refuse(`${member} must be a non-empty string`);
  return value;
}

function optionalString(entry: Record<string, unknown>, member: string): string | undefined {
  const value = entry[member];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') refuse(`${member} must be a string`);
  if (value.includes('\u0000')) refuse(`${member} holds a NUL character`);
  return value;
}

function optionalBoolean(entry: Record<string, unknown>, member: string): boolean | undefined {
  const value = entry[member];
  if (value !== undefined && typeof value !== 'boolean') refuse(`${member} must be true or false`);
  return value;
}

function optionalStrings(entry: Record<string, unknown>, member: string): string[] | null {
  const value = entry[member];
  if (value === undefined) return null;
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    refuse(`${member} must be an array of strings`);
  }
  if (value.some((item: string) => item.includes('\u0000'))) refuse(`${member} holds a NUL character`);
  return [...value];
}

function stringMap(
  entry: Record<string, unknown>,
  member: string,
  checkName: (name: string) => boolean,
): Record<string, string> {
  const value = entry[member];
  if (value === undefined) return {};
  if (!isObject(value)) refuse(`${member} must be an object of strings`);
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') refuse(`${member} must be an object of strings`);
    if (!checkName(name)) refuse(`${member} has a name it cannot carry`);
    if (item.includes('\u0000')) refuse(`${member} holds a NUL character`);
  }
  return { ...(value as Record<string, string>) };
}

function checkEnvName(name: string): boolean {
  return name !== '' && !name.includes('=') && !name.includes('\u0000');
}

function httpUrl(entry: Record<string, unknown>): string {
  const text = requiredString(entry, 'url');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('url is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('url must be http or https');
  if (url.username !== '' || url.password !== '')
    refuse('url must not hold credentials; give them in headers');
  return text;
}

/** `headers` (Claude Code) or `http_headers` (Codex), the same thing. */
function headersOf(entry: Record<string, unknown>): Record<string, string> {
  if (entry.headers !== undefined && entry.http_headers !== undefined) {
    refuse('it has both headers and http_headers; keep one');
  }
  const member = entry.http_headers !== undefined ? 'http_headers' : 'headers';
  const headers = stringMap(entry, member, (name) => HEADER_NAME.test(name));
  for (const [name, value] of Object.entries(headers)) {
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      refuse(`${member} sets ${name.toLowerCase()}, which the daemon sets`);
    if (!HEADER_VALUE.test(value)) refuse(`${member} has a value that is not visible ASCII`);
  }
  return headers;
}

/** The members that hold `${…}`, which Claude Code expands from its environment and the daemon does not. */
function unexpanded(config: McpServerConfig): string[] {
  const members: Array<[string, string]> =
    config.type === 'stdio'
      ? [
          ['command', config.command],
          ...config.args.map((arg, i): [string, string] => [`args/${i}`, arg]),
          ...Object.entries(config.env).map(([name, value]): [string, string] => [`env/${name}`, value]),
          ['cwd', config.cwd ?? ''],
        ]
      : [
          ['url', config.url],
          ...Object.entries(config.headers).map(([name, value]): [string, string] => [
            `headers/${name}`,
            value,
          ]),
        ];
  return members.filter(([, value]) => value.includes('${')).map(([member]) => member);
}

/** Member names as a warning lists them: bounded in number and length. */
function listed(members: readonly string[]): string[] {
  const limit = MCP_LIMITS.listed_members;
  const names = members
    .slice(0, limit)
    .map((member) => [...member].slice(0, MCP_LIMITS.server_name_characters).join(''));
  return members.length > limit ? [...names, `(${members.length - limit} more)`] : names;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
