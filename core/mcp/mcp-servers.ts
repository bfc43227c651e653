import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { mcpCallFailure } from './mcp-call-errors.js';
import { MCP_LIMITS } from './mcp-limits.js';
import type {
  McpCallOutcome,
  McpClientInfo,
  McpServerEntry,
  McpServerStatus,
  McpTool,
  McpWarn,
} from './mcp-types.js';
import { ServerSupervisor } from './server-supervisor.js';
import { exceedsDepth } from './tool-admission.js';

export { MCP_CALL_MESSAGES, type McpCallError } from './mcp-call-errors.js';
export { MCP_LIMITS, MCP_SUPERVISION } from './mcp-limits.js';
export type {
  McpCallOutcome,
  McpServerConfig,
  McpServerEntry,
  McpServerState,
  McpServerStatus,
  McpTool,
} from './mcp-types.js';

export interface McpServersOptions {
  clock: Clock;
  /** How the daemon names itself to every server (MCP's `clientInfo`). */
  client: McpClientInfo;
  /** By the configuration's keys, in its order. */
  servers: Readonly<Record<string, McpServerEntry>>;
  /**
   * Where the daemon makes the private directory whose empty subdirectories are the working directories of
   * stdio servers configured without a `cwd` (the system's temporary directory by default).
   */
  scratchRoot?: string;
  warn: McpWarn;
}

/** A configured server whose entry was refused: shown `failed`, never started. */
interface Refused {
  name: string;
  reason: string;
}

/**
 * The configured MCP servers, each supervised on its own (`server-supervisor.ts` states its lifecycle):
 * a server that hangs, crashes or misbehaves only fails its own calls.
 */
export class McpServers {
  readonly #entries: ReadonlyArray<ServerSupervisor | Refused>;
  readonly #supervisors: readonly ServerSupervisor[];
  readonly #options: McpServersOptions;
  #scratch: string | null = null;
  #started = false;
  #closed = false;

  constructor(options: McpServersOptions) {
    this.#options = options;
    const names = Object.keys(options.servers);
    this.#entries = Object.entries(options.servers).map(([name, entry]) =>
      'refused' in entry
        ? { name, reason: entry.refused }
        : new ServerSupervisor({
            name,
            config: entry.config,
            configuredServers: names,
            clock: options.clock,
            client: options.client,
            warn: options.warn,
          }),
    );
    this.#supervisors = this.#entries.filter((entry) => entry instanceof ServerSupervisor);
  }

  /**
   * Warns once about each entry the configuration got wrong or partly, then starts every enabled server
   * in the background and returns at once; a server never blocks another.
   */
  start(): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
    this.#warnAboutConfiguration();
    const directories = this.#workDirectories();
    for (const [index, server] of this.#supervisors.entries()) {
      server.start(server.needsWorkDirectory ? directories(index) : null);
    }
  }

  /** The tools of the servers ready now, in server then tool order: a turn takes this snapshot at admission. */
  tools(): McpTool[] {
    return this.#supervisors.flatMap((server) => server.tools);
  }

  /** Each configured server: its name, state, how many tools it offers (0 unless ready) and why it is away. */
  status(): McpServerStatus[] {
    return this.#entries.map((entry) => {
      if (!(entry instanceof ServerSupervisor)) {
        return { name: entry.name, state: 'failed', tools: 0, reason: entry.reason };
      }
      const { reason } = entry;
      return {
        name: entry.name,
        state: entry.state,
        tools: entry.tools.length,
        ...(reason === undefined ? {} : { reason }),
      };
    });
  }

  /** `tools/call` of `name` (an `McpTool.name`) with the model's arguments; never rejects. */
  async call(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<McpCallOutcome> {
    const owner = this.#owner(name);
    if (owner === undefined) return mcpCallFailure('unknown_tool');
    if (exceedsDepth(args, MCP_LIMITS.arguments_depth)) return mcpCallFailure('invalid_arguments');
    try {
      return await owner.call(name, args, signal);
    } catch {
      return mcpCallFailure('server_failed');
    }
  }

  /** Stops every server (and any restart pending), waits for the children to exit, removes the directories. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#supervisors.map((server) => server.close()));
    if (this.#scratch !== null) rmSync(this.#scratch, { recursive: true, force: true });
  }

  /**
   * The server that offered `name`; else, for a name never offered (its server not ready yet), the server
   * whose plain prefix it begins with, the longest such prefix deciding.
   */
  #owner(name: string): ServerSupervisor | undefined {
    const offering = this.#supervisors.find((server) => server.offered(name));
    if (offering !== undefined) return offering;
    let owner: ServerSupervisor | undefined;
    let longest = 0;
    for (const server of this.#supervisors) {
      const claim = server.claim(name);
      if (claim > longest) {
        owner = server;
        longest = claim;
      }
    }
    return owner;
  }

  #warnAboutConfiguration(): void {
    const { servers, warn } = this.#options;
    for (const [server, entry] of Object.entries(servers)) {
      if ('refused' in entry) {
        warn(
          { server, reason: entry.refused },
          'MCP server configuration refused; the server is not started',
        );
        continue;
      }
      if (entry.unread !== undefined && entry.unread.length > 0) {
        warn(
          { server, members: entry.unread },
          'MCP server configuration has members the daemon does not read',
        );
      }
      if (entry.unexpanded !== undefined && entry.unexpanded.length > 0) {
        warn(
          { server, members: entry.unexpanded },
          'MCP server configuration holds variable references, which the daemon passes on as written',
        );
      }
    }
  }

  /**
   * Makes the working directory of an enabled stdio server without a `cwd`, by its index: an empty
   * directory inside one private directory (0700) of this daemon, never its home; null when it could not
   * be made.
   */
  #workDirectories(): (index: number) => string | null {
    const { scratchRoot, warn } = this.#options;
    if (!this.#supervisors.some((server) => server.needsWorkDirectory)) return () => null;
    try {
      this.#scratch = mkdtempSync(join(scratchRoot ?? tmpdir(), 'magid-mcp-'));
    } catch (error) {
      warn(
        { reason: (error as NodeJS.ErrnoException).code ?? 'unknown' },
        'the MCP servers’ working directories could not be made',
      );
      return () => null;
    }
    const scratch = this.#scratch;
    return (index) => {
      const directory = join(scratch, String(index));
      try {
        mkdirSync(directory, { mode: 0o700 });
        return directory;
      } catch {
        return null;
      }
    };
  }
}
