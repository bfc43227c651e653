import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import { mcpCallFailure } from './mcp-call-errors.js';
import { MCP_LIMITS, MCP_SUPERVISION } from './mcp-limits.js';
import type {
  McpCallOutcome,
  McpClientInfo,
  McpServerConfig,
  McpServerState,
  McpTool,
  McpWarn,
} from './mcp-types.js';
import { ServerConnection } from './server-connection.js';
import { type Loss, lossText } from './server-loss.js';
import { ToolAdmission } from './tool-admission.js';
import { runToolCall } from './tool-call.js';
import { serverPrefix } from './tool-names.js';

interface Listing {
  admission: ToolAdmission;
  /** Tools were left out beyond `tools_per_server`. */
  overflowed: boolean;
}

export interface SupervisorOptions {
  name: string;
  config: McpServerConfig;
  /** Every configured server's name, for names that could belong to two servers. */
  configuredServers: readonly string[];
  clock: Clock;
  client: McpClientInfo;
  warn: McpWarn;
}

/** What `status` shows of a server that cannot be started at all. */
const NO_WORK_DIRECTORY = 'its private working directory could not be made';

/**
 * One configured MCP server over the lifetimes of its connections (a child over stdio, or a session over
 * HTTP).
 *
 * States: `stopped` until `start()` (and for good once disabled or closed); `starting` while a child is
 * spawned (or the URL reached) and answers `initialize` and `tools/list`, all within the start timeout;
 * `ready` once it has; then `restarting` while a backoff runs after any loss: the command could not be
 * spawned, the URL could not be reached, the child exited or the connection broke, it missed the start
 * deadline (it is killed), it refused the start, or, once ready, it let `call_timeouts` calls in a row time
 * out without answering one (it is taken for hung and killed). The backoff is `backoff_ms_base` doubled per
 * loss in a row up to `backoff_ms_max`; a server that had been ready for `stable_ms` when it was lost
 * starts over at the base. `failed` is terminal and only for a command that could not be spawned
 * `spawn_attempts` times in a row (a missing or non-executable command does not fix itself); a server that
 * runs but keeps exiting stays `restarting`, at most one try per `backoff_ms_max`. While `failed` or
 * `restarting`, `reason` says why in one line, with the last line a child wrote on stderr; its last lines go
 * to the log.
 */
export class ServerSupervisor {
  readonly name: string;
  readonly #options: SupervisorOptions;
  readonly #startTimeoutMs: number;
  readonly #callTimeoutMs: number;
  readonly #prefix: string;
  #workDirectory: string | null = null;
  #state: McpServerState = 'stopped';
  #reason: string | undefined;
  #connection: ServerConnection | undefined;
  #tools: McpTool[] = [];
  #byName = new Map<string, McpTool>();
  /** Every name this server's tools were ever offered under, so a later call is told the server is away. */
  readonly #offered = new Set<string>();
  #restart: Deadline | undefined;
  #losses = 0;
  #spawnFailures = 0;
  /** Calls of the current connection that timed out since it last answered one. */
  #timeouts = 0;
  #readyAt: number | undefined;
  #closed = false;
  readonly #stopping = new Set<Promise<void>>();

  constructor(options: SupervisorOptions) {
    this.name = options.name;
    this.#options = options;
    this.#startTimeoutMs = boundedTimeout(options.config.start_timeout_ms);
    this.#callTimeoutMs = boundedTimeout(options.config.call_timeout_ms);
    this.#prefix = serverPrefix(options.name);
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** Why the server is `failed` or `restarting`; undefined otherwise. */
  get reason(): string | undefined {
    return this.#state === 'failed' || this.#state === 'restarting' ? this.#reason : undefined;
  }

  /** The tools offered now: none unless ready. */
  get tools(): readonly McpTool[] {
    return this.#state === 'ready' ? this.#tools : [];
  }

  /** Whether it is an enabled stdio server without a `cwd`, which runs in a private directory. */
  get needsWorkDirectory(): boolean {
    const { config } = this.#options;
    return config.enabled && config.type === 'stdio' && config.cwd === null;
  }

  /** Whether a tool of this server was ever offered as `name`. */
  offered(name: string): boolean {
    return this.#offered.has(name);
  }

  /** The length of this server's plain prefix when `name` begins with it, else 0. */
  claim(name: string): number {
    return name.startsWith(this.#prefix) ? this.#prefix.length : 0;
  }

  /**
   * Starts the server; a stdio server without a `cwd` runs in `workDirectory`, its private empty directory
   * (null when it could not be made: then the server is `failed`).
   */
  start(workDirectory: string | null): void {
    if (this.#closed || !this.#options.config.enabled || this.#state !== 'stopped') return;
    if (this.needsWorkDirectory && workDirectory === null) {
      this.#state = 'failed';
      this.#reason = NO_WORK_DIRECTORY;
      this.#options.warn(
        { server: this.name, reason: 'no_work_directory' },
        'MCP server failed and is not restarted',
      );
      return;
    }
    this.#workDirectory = workDirectory;
    this.#launch();
  }

  async call(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<McpCallOutcome> {
    const connection = this.#connection;
    if (this.#state !== 'ready' || connection === undefined) return mcpCallFailure('server_unavailable');
    const tool = this.#byName.get(name);
    if (tool === undefined) return mcpCallFailure('unknown_tool');
    const outcome = await runToolCall({
      connection,
      tool: tool.tool,
      args,
      signal,
      clock: this.#options.clock,
      timeoutMs: this.#callTimeoutMs,
    });
    this.#noteAnswer(connection, outcome);
    return outcome;
  }

  /** Stops the connection and any pending restart for good, and settles once every child of this server is gone. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#restart?.cancel();
    this.#restart = undefined;
    const connection = this.#connection;
    this.#clear('stopped');
    if (connection !== undefined) this.#stop(connection);
    await Promise.all([...this.#stopping]);
  }

  /**
   * Counts the calls in a row the connection left unanswered: a ready server that answers none is restarted.
   * A call that failed because the connection broke loses it at once.
   */
  #noteAnswer(connection: ServerConnection, outcome: McpCallOutcome): void {
    if (this.#connection !== connection) return;
    if (outcome.ok || outcome.code === 'tool_failed' || outcome.code === 'invalid_result') this.#timeouts = 0;
    else if (outcome.code === 'server_failed') this.#lost(connection, connection.loss());
    else if (outcome.code === 'timed_out' && ++this.#timeouts >= MCP_SUPERVISION.call_timeouts) {
      this.#lost(connection, { reason: 'unresponsive' });
    }
  }

  #launch(): void {
    if (this.#closed) return;
    const { config, clock } = this.#options;
    const cwd = config.type === 'stdio' ? (config.cwd ?? this.#workDirectory ?? '') : '';
    const connection = new ServerConnection(config, cwd, clock, this.#options.client);
    this.#connection = connection;
    this.#state = 'starting';
    this.#timeouts = 0;
    const start = new AbortController();
    const deadline = deadlineAt(clock, clock.now() + this.#startTimeoutMs, () => start.abort());
    // A close during the start fails the start too, which says why; a close after it is a loss.
    void connection.closed.then(() => {
      if (this.#state !== 'starting') this.#lost(connection, connection.loss());
    });
    this.#open(connection, start.signal).then(
      (listing) => {
        deadline.cancel();
        if (this.#connection !== connection) return;
        if (connection.hasClosed) this.#lost(connection, connection.loss());
        else this.#ready(listing);
      },
      (error: unknown) => {
        deadline.cancel();
        this.#lost(connection, connection.startLoss(error, start.signal.aborted));
      },
    );
  }

  async #open(connection: ServerConnection, signal: AbortSignal): Promise<Listing> {
    await connection.connect(signal);
    const { config, configuredServers } = this.#options;
    const admission = new ToolAdmission(this.name, configuredServers, {
      enabled: config.enabled_tools,
      disabled: config.disabled_tools,
    });
    if (!connection.offersTools) return { admission, overflowed: false };
    let cursor: string | undefined;
    // A listing that runs past `tools_per_server` pages is cut there, as one with too many tools is.
    for (let pages = 1; ; pages++) {
      const page = await connection.listTools(cursor, signal);
      const leftOver = admission.add(page.tools);
      cursor = page.nextCursor;
      if (leftOver > 0) return { admission, overflowed: true };
      if (cursor === undefined) return { admission, overflowed: false };
      if (admission.full || pages >= MCP_LIMITS.tools_per_server) return { admission, overflowed: true };
    }
  }

  #ready({ admission, overflowed }: Listing): void {
    const { warn, clock } = this.#options;
    const tools = admission.tools();
    for (const { tool, reason } of admission.skipped) {
      warn({ server: this.name, ...(tool === null ? {} : { tool }), reason }, 'MCP server tool skipped');
    }
    if (overflowed) {
      warn({ server: this.name, reason: 'too_many_tools' }, 'MCP server tools over the limit skipped');
    }
    this.#tools = tools;
    this.#byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const tool of tools) this.#offered.add(tool.name);
    this.#state = 'ready';
    this.#reason = undefined;
    this.#readyAt = clock.now();
    this.#spawnFailures = 0;
  }

  #lost(connection: ServerConnection, loss: Loss): void {
    if (this.#connection !== connection) return;
    const { warn, clock } = this.#options;
    const stderr = connection.stderrLines();
    const wasReadyFor = this.#readyAt === undefined ? 0 : clock.now() - this.#readyAt;
    this.#readyAt = undefined;
    this.#clear('restarting');
    this.#stop(connection);
    if (this.#closed) return;
    const lastLine = stderr.at(-1);
    this.#reason = lossText(
      loss,
      this.#startTimeoutMs,
      lastLine === undefined ? undefined : connection.shown(lastLine, MCP_SUPERVISION.status_line_bytes),
    );
    const fields = {
      server: this.name,
      reason: loss.reason,
      ...(loss.detail === undefined ? {} : { detail: loss.detail }),
    };
    const said = stderr.length > 0 ? { stderr } : {};
    if (loss.reason !== 'spawn_failed') this.#spawnFailures = 0;
    else if (++this.#spawnFailures >= MCP_SUPERVISION.spawn_attempts) {
      this.#state = 'failed';
      warn({ ...fields, ...said }, 'MCP server failed and is not restarted');
      return;
    }
    if (wasReadyFor >= MCP_SUPERVISION.stable_ms) this.#losses = 0;
    const delay = Math.min(
      MCP_LIMITS.backoff_ms_base * 2 ** Math.min(this.#losses, 30),
      MCP_LIMITS.backoff_ms_max,
    );
    this.#losses++;
    warn({ ...fields, delay_ms: delay, ...said }, 'MCP server stopped and is restarted after a delay');
    this.#restart = deadlineAt(clock, clock.now() + delay, () => {
      this.#restart = undefined;
      this.#launch();
    });
  }

  #clear(state: McpServerState): void {
    this.#connection = undefined;
    this.#tools = [];
    this.#byName = new Map();
    this.#state = state;
  }

  #stop(connection: ServerConnection): void {
    const stopping = connection.stop();
    this.#stopping.add(stopping);
    void stopping.then(() => this.#stopping.delete(stopping));
  }
}

function boundedTimeout(ms: number): number {
  if (!Number.isFinite(ms)) return MCP_LIMITS.timeout_ms_default;
  return Math.min(Math.max(ms, MCP_LIMITS.timeout_ms_min), MCP_LIMITS.timeout_ms_max);
}
