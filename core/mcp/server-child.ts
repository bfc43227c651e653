import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { PaginatedResultSchema, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { DAEMON } from '../../config/daemon.js';
import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import { MCP_SUPERVISION } from './mcp-limits.js';
import type { McpServerConfig } from './mcp-types.js';

/**
 * Deadlines are the caller's, on its clock; the SDK's own timer (real time, per request) is set past
 * any of them. Node's timers take at most this many milliseconds.
 */
const SDK_TIMEOUT_MS = 2_147_483_647;

/** Records the child's pid as soon as it is spawned: the SDK forgets it once it closes the transport. */
class ChildTransport extends StdioClientTransport {
  spawnedPid: number | undefined;

  override start(): Promise<void> {
    const started = super.start();
    // The process is spawned synchronously inside `start`; a command that cannot run has no pid.
    this.spawnedPid = this.pid ?? undefined;
    return started;
  }
}

export interface ListedPage {
  /** The tools as the server sent them, each to be checked before use. */
  tools: readonly unknown[];
  nextCursor: string | undefined;
}

/**
 * One child process of one MCP server and the SDK client connected to it, from spawn to exit. The child
 * gets the SDK's small default environment plus the configured `env`, never the daemon's; what it writes
 * to stderr is read and dropped.
 */
export class ServerChild {
  readonly #clock: Clock;
  readonly #transport: ChildTransport;
  readonly #client: Client;
  readonly #exited: Promise<void>;
  #hasExited = false;
  #stopped: Promise<void> | undefined;

  constructor(config: McpServerConfig, cwd: string, clock: Clock) {
    this.#clock = clock;
    this.#transport = new ChildTransport({
      command: config.command,
      args: [...config.args],
      env: { ...config.env },
      cwd,
      stderr: 'pipe',
      maxBufferSize: MCP_SUPERVISION.message_bytes,
    });
    // A listener puts the pipe in flowing mode: a flood is read and dropped, never buffered or logged.
    this.#transport.stderr?.on('data', () => {});
    this.#client = new Client({ name: DAEMON.name, version: DAEMON.version }, { capabilities: {} });
    // A line that is not a message, a broken pipe: nothing a server does is logged, and a connection
    // that is lost shows as the child's exit.
    this.#client.onerror = () => {};
    this.#exited = new Promise((resolve) => {
      // Called once the process has exited and its pipes have closed, before any pending request fails.
      this.#client.onclose = () => {
        this.#hasExited = true;
        resolve();
      };
    });
  }

  /** Settles once the child is gone (or could not be spawned at all). */
  get exited(): Promise<void> {
    return this.#exited;
  }

  get hasExited(): boolean {
    return this.#hasExited;
  }

  /** Whether a process was started; false when the command could not be run. Known once `connect` began. */
  get spawned(): boolean {
    return this.#transport.spawnedPid !== undefined;
  }

  /** Spawns the child and runs `initialize`. */
  connect(signal: AbortSignal): Promise<void> {
    return this.#client.connect(this.#transport, { signal, timeout: SDK_TIMEOUT_MS });
  }

  /** Whether the server said at `initialize` that it has tools; one without them is not asked for a list. */
  get offersTools(): boolean {
    return this.#client.getServerCapabilities()?.tools !== undefined;
  }

  /** One page of `tools/list`; the tools are not checked here, so one bad tool cannot spoil the page. */
  async listTools(cursor: string | undefined, signal: AbortSignal): Promise<ListedPage> {
    const page = await this.#client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      PaginatedResultSchema,
      { signal, timeout: SDK_TIMEOUT_MS },
    );
    const tools = (page as { tools?: unknown }).tools;
    return { tools: Array.isArray(tools) ? tools : [], nextCursor: page.nextCursor };
  }

  /** `tools/call`; the result is returned unchecked, for the caller to tell a malformed one apart. */
  callTool(tool: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<unknown> {
    return this.#client.request(
      { method: 'tools/call', params: { name: tool, arguments: { ...args } } },
      ResultSchema,
      { signal, timeout: SDK_TIMEOUT_MS },
    );
  }

  /**
   * SIGTERM, then SIGKILL after the grace on the clock; settles once the child is gone, or one more grace
   * after SIGKILL if its pipes stay open (a process it started may hold them), so stopping always ends.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<void> {
    const grace = MCP_SUPERVISION.kill_grace_ms;
    const deadlines: Deadline[] = [];
    const givenUp = new Promise<void>((resolve) => {
      const start = this.#clock.now();
      if (!this.#hasExited) this.#signal('SIGTERM');
      deadlines.push(
        deadlineAt(this.#clock, start + grace, () => {
          if (!this.#hasExited) this.#signal('SIGKILL');
        }),
        deadlineAt(this.#clock, start + 2 * grace, resolve),
      );
    });
    await Promise.race([this.#exited, givenUp]);
    for (const deadline of deadlines) deadline.cancel();
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.#transport.spawnedPid;
    if (pid === undefined) return;
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}
