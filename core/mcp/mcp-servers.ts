import type { Clock } from '../clock.js';
import { mcpCallFailure } from './mcp-call-errors.js';
import { MCP_LIMITS } from './mcp-limits.js';
import type { McpCallOutcome, McpServerConfig, McpServerStatus, McpTool, McpWarn } from './mcp-types.js';
import { ServerSupervisor } from './server-supervisor.js';
import { exceedsDepth } from './tool-admission.js';

export { MCP_CALL_MESSAGES, type McpCallError } from './mcp-call-errors.js';
export { MCP_LIMITS, MCP_SUPERVISION } from './mcp-limits.js';
export type {
  McpCallOutcome,
  McpServerConfig,
  McpServerState,
  McpServerStatus,
  McpTool,
} from './mcp-types.js';

export interface McpServersOptions {
  clock: Clock;
  /** By name, names already checked: [a-z][a-z0-9_]*. */
  servers: Readonly<Record<string, McpServerConfig>>;
  /** Where each child starts (the daemon's home). */
  cwd: string;
  warn: McpWarn;
}

/**
 * The configured MCP servers, each supervised on its own (`server-supervisor.ts` states its lifecycle):
 * a server that hangs, crashes or misbehaves only fails its own calls.
 */
export class McpServers {
  readonly #servers: ServerSupervisor[];
  #closed = false;

  constructor({ clock, servers, cwd, warn }: McpServersOptions) {
    const names = Object.keys(servers);
    this.#servers = Object.entries(servers).map(
      ([name, config]) => new ServerSupervisor({ name, config, configuredServers: names, cwd, clock, warn }),
    );
  }

  /** Starts every enabled server in the background and returns at once; a server never blocks another. */
  start(): void {
    if (this.#closed) return;
    for (const server of this.#servers) server.start();
  }

  /** The tools of the servers ready now, in server then tool order: a turn takes this snapshot at admission. */
  tools(): McpTool[] {
    return this.#servers.flatMap((server) => server.tools);
  }

  /** Each configured server: its name, state and how many tools it offers (0 unless ready). */
  status(): McpServerStatus[] {
    return this.#servers.map((server) => ({
      name: server.name,
      state: server.state,
      tools: server.tools.length,
    }));
  }

  /** `tools/call` of `name` (an `McpTool.name`) with the model's arguments; never rejects. */
  async call(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<McpCallOutcome> {
    // Tool names never overlap across servers (see ToolAdmission), so the longest claiming name decides.
    let owner: ServerSupervisor | undefined;
    for (const server of this.#servers) {
      if (server.claims(name) && (owner === undefined || server.name.length > owner.name.length))
        owner = server;
    }
    if (owner === undefined) return mcpCallFailure('unknown_tool');
    if (exceedsDepth(args, MCP_LIMITS.arguments_depth)) return mcpCallFailure('invalid_arguments');
    try {
      return await owner.call(name, args, signal);
    } catch {
      return mcpCallFailure('server_failed');
    }
  }

  /** Stops every server (and any restart pending) and waits for the children to exit. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#servers.map((server) => server.close()));
  }
}
