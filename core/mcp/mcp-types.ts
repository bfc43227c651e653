/** What every configured MCP server has, however it is reached (its defaults filled). */
interface McpServerCommon {
  /** Deadline of the start: `initialize` and `tools/list`. */
  start_timeout_ms: number;
  /** Deadline of each call. */
  call_timeout_ms: number;
  enabled: boolean;
  /** Only these tools (by their servers' names) are offered, when given. */
  enabled_tools: readonly string[] | null;
  /** These tools (by their servers' names) are never offered. */
  disabled_tools: readonly string[];
}

/** A server the daemon starts as its child and speaks to over stdio. */
export interface McpStdioServerConfig extends McpServerCommon {
  type: 'stdio';
  command: string;
  args: readonly string[];
  /** Added to the child's small default environment; the daemon's own environment never reaches it. */
  env: Readonly<Record<string, string>>;
  /** Its working directory; null for a private empty directory of the daemon's. */
  cwd: string | null;
}

/** A server reached over the protocol's Streamable HTTP transport. */
export interface McpHttpServerConfig extends McpServerCommon {
  type: 'http';
  url: string;
  /** Sent with every request; values may be secrets. */
  headers: Readonly<Record<string, string>>;
}

/** How one MCP server is reached, as the configuration gives it (its defaults filled). */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/**
 * One configured server: usable, with the members of its entry the daemon does not read and those holding
 * `${…}` (passed on as written), or refused with a one-line reason (it is shown `failed`, never started).
 */
export type McpServerEntry =
  | { config: McpServerConfig; unread?: readonly string[]; unexpanded?: readonly string[] }
  | { refused: string };

export type McpServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface McpTool {
  /** What the model sees: `mcp_<server>_<tool>` made to fit `^[a-zA-Z0-9_-]{1,64}$` (`tool-names.ts`). */
  name: string;
  server: string;
  /** The server's own name for it, which calls use. */
  tool: string;
  /** Cut to `description_bytes` of UTF-8. */
  description: string;
  inputSchema: Readonly<Record<string, unknown>>;
}

export type McpCallOutcome = { ok: true; output: string } | { ok: false; code: string; message: string };

export interface McpServerStatus {
  name: string;
  state: McpServerState;
  /** 0 unless the server is ready. */
  tools: number;
  /** While `failed` or `restarting`: why, in one line of the daemon's own words. */
  reason?: string;
}

/** Log lines carry only fixed text and these fields. */
export type McpWarn = (fields: Record<string, unknown>, message: string) => void;

/** The name and version the daemon gives a server when it connects (MCP's `clientInfo`). */
export interface McpClientInfo {
  name: string;
  version: string;
}
