/** How one MCP server is started, as the configuration gives it (its name checked, its defaults filled). */
export interface McpServerConfig {
  command: string;
  args: readonly string[];
  /** Added to the child's small default environment; the daemon's own environment never reaches it. */
  env: Readonly<Record<string, string>>;
  /** Deadline of each call, and of the start (initialize + tools/list). */
  timeout_ms: number;
  enabled: boolean;
}

export type McpServerState = 'starting' | 'ready' | 'restarting' | 'failed' | 'stopped';

export interface McpTool {
  /** What the model sees: `mcp_<server>_<tool>`, at most 48 bytes of [a-z][a-z0-9_]*. */
  name: string;
  server: string;
  /** The server's own name for it. */
  tool: string;
  /** Cut to 512 UTF-8 bytes. */
  description: string;
  inputSchema: Readonly<Record<string, unknown>>;
}

export type McpCallOutcome = { ok: true; output: string } | { ok: false; code: string; message: string };

export interface McpServerStatus {
  name: string;
  state: McpServerState;
  /** 0 unless the server is ready. */
  tools: number;
}

/** Log lines carry only fixed text and these fields. */
export type McpWarn = (fields: Record<string, unknown>, message: string) => void;
