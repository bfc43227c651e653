import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import { mcpCallFailure } from './mcp-call-errors.js';
import { MCP_LIMITS, MCP_SUPERVISION } from './mcp-limits.js';
import type { McpCallOutcome, McpServerConfig, McpServerState, McpTool, McpWarn } from './mcp-types.js';
import { ServerChild } from './server-child.js';
import { ToolAdmission } from './tool-admission.js';
import { runToolCall } from './tool-call.js';

/** Why a child stopped serving; warnings name only the server and this. */
type LossReason = 'spawn_failed' | 'start_timeout' | 'start_failed' | 'exited' | 'unresponsive';

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
  cwd: string;
  clock: Clock;
  warn: McpWarn;
}

/**
 * One configured MCP server over the lifetimes of its children.
 *
 * States: `stopped` until `start()` (and for good once disabled or closed); `starting` while a child is
 * spawned and answers `initialize` and `tools/list`, all within `timeout_ms`; `ready` once it has; then
 * `restarting` while a backoff runs after any loss: the command could not be spawned, the child exited, it
 * missed the start deadline (it is killed), it refused the start, or, once ready, it let `call_timeouts`
 * calls in a row time out without answering one (it is taken for hung and killed). The backoff is `backoff_ms_base`
 * doubled per loss in a row up to `backoff_ms_max`; a server that had been ready for `stable_ms` when it
 * was lost starts over at the base. `failed` is terminal and only for a command that could not be spawned
 * `spawn_attempts` times in a row (a missing or non-executable command does not fix itself); a server that
 * runs but keeps exiting stays `restarting`, at most one try per `backoff_ms_max`.
 */
export class ServerSupervisor {
  readonly name: string;
  readonly #options: SupervisorOptions;
  readonly #timeoutMs: number;
  #state: McpServerState = 'stopped';
  #child: ServerChild | undefined;
  #tools: McpTool[] = [];
  #byName = new Map<string, McpTool>();
  #restart: Deadline | undefined;
  #losses = 0;
  #spawnFailures = 0;
  /** Calls of the current child that timed out since it last answered one. */
  #timeouts = 0;
  #readyAt: number | undefined;
  #closed = false;
  readonly #stopping = new Set<Promise<void>>();

  constructor(options: SupervisorOptions) {
    this.name = options.name;
    this.#options = options;
    this.#timeoutMs = boundedTimeout(options.config.timeout_ms);
  }

  get state(): McpServerState {
    return this.#state;
  }

  /** The tools offered now: none unless ready. */
  get tools(): readonly McpTool[] {
    return this.#state === 'ready' ? this.#tools : [];
  }

  /** Whether `name` is in this server's part of the `mcp_` names. */
  claims(name: string): boolean {
    return name.startsWith(`mcp_${this.name}_`);
  }

  start(): void {
    if (this.#closed || !this.#options.config.enabled || this.#state !== 'stopped') return;
    this.#launch();
  }

  async call(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<McpCallOutcome> {
    const child = this.#child;
    if (this.#state !== 'ready' || child === undefined) return mcpCallFailure('server_unavailable');
    const tool = this.#byName.get(name);
    if (tool === undefined) return mcpCallFailure('unknown_tool');
    const outcome = await runToolCall({
      child,
      tool: tool.tool,
      args,
      signal,
      clock: this.#options.clock,
      timeoutMs: this.#timeoutMs,
    });
    this.#noteAnswer(child, outcome);
    return outcome;
  }

  /** Counts the calls in a row the child left unanswered; a ready server that answers none is restarted. */
  #noteAnswer(child: ServerChild, outcome: McpCallOutcome): void {
    if (this.#child !== child) return;
    if (outcome.ok || outcome.code === 'tool_failed' || outcome.code === 'invalid_result') this.#timeouts = 0;
    else if (outcome.code === 'timed_out' && ++this.#timeouts >= MCP_SUPERVISION.call_timeouts) {
      this.#lost(child, 'unresponsive');
    }
  }

  /** Stops the child and any pending restart for good, and settles once every child of this server is gone. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#restart?.cancel();
    this.#restart = undefined;
    const child = this.#child;
    this.#clear('stopped');
    if (child !== undefined) this.#stop(child);
    await Promise.all([...this.#stopping]);
  }

  #launch(): void {
    if (this.#closed) return;
    const { config, cwd, clock } = this.#options;
    const child = new ServerChild(config, cwd, clock);
    this.#child = child;
    this.#state = 'starting';
    this.#timeouts = 0;
    const start = new AbortController();
    const deadline = deadlineAt(clock, clock.now() + this.#timeoutMs, () => start.abort());
    void child.exited.then(() => this.#lost(child, child.spawned ? 'exited' : 'spawn_failed'));
    this.#open(child, start.signal).then(
      (listing) => {
        deadline.cancel();
        if (this.#child !== child || child.hasExited) return;
        this.#ready(listing);
      },
      () => {
        deadline.cancel();
        const reason = !child.spawned
          ? 'spawn_failed'
          : child.hasExited
            ? 'exited'
            : start.signal.aborted
              ? 'start_timeout'
              : 'start_failed';
        this.#lost(child, reason);
      },
    );
  }

  async #open(child: ServerChild, signal: AbortSignal): Promise<Listing> {
    await child.connect(signal);
    const admission = new ToolAdmission(this.name, this.#options.configuredServers);
    if (!child.offersTools) return { admission, overflowed: false };
    let cursor: string | undefined;
    // A listing that runs past `tools_per_server` pages is cut there, as one with too many tools is.
    for (let pages = 1; ; pages++) {
      const page = await child.listTools(cursor, signal);
      const leftOver = admission.add(page.tools);
      cursor = page.nextCursor;
      if (leftOver > 0) return { admission, overflowed: true };
      if (cursor === undefined) return { admission, overflowed: false };
      if (admission.full || pages >= MCP_LIMITS.tools_per_server) return { admission, overflowed: true };
    }
  }

  #ready({ admission, overflowed }: Listing): void {
    const { warn, clock } = this.#options;
    for (const reason of admission.skipped) warn({ server: this.name, reason }, 'MCP server tool skipped');
    if (overflowed) {
      warn({ server: this.name, reason: 'too_many_tools' }, 'MCP server tools over the limit skipped');
    }
    this.#tools = admission.tools;
    this.#byName = new Map(admission.tools.map((tool) => [tool.name, tool]));
    this.#state = 'ready';
    this.#readyAt = clock.now();
    this.#spawnFailures = 0;
  }

  #lost(child: ServerChild, reason: LossReason): void {
    if (this.#child !== child) return;
    const { warn, clock } = this.#options;
    const wasReadyFor = this.#readyAt === undefined ? 0 : clock.now() - this.#readyAt;
    this.#readyAt = undefined;
    this.#clear('restarting');
    this.#stop(child);
    if (this.#closed) return;
    if (reason !== 'spawn_failed') this.#spawnFailures = 0;
    else if (++this.#spawnFailures >= MCP_SUPERVISION.spawn_attempts) {
      this.#state = 'failed';
      warn({ server: this.name, reason }, 'MCP server failed and is not restarted');
      return;
    }
    if (wasReadyFor >= MCP_SUPERVISION.stable_ms) this.#losses = 0;
    const delay = Math.min(
      MCP_LIMITS.backoff_ms_base * 2 ** Math.min(this.#losses, 30),
      MCP_LIMITS.backoff_ms_max,
    );
    this.#losses++;
    warn({ server: this.name, reason, delay_ms: delay }, 'MCP server stopped and is restarted after a delay');
    this.#restart = deadlineAt(clock, clock.now() + delay, () => {
      this.#restart = undefined;
      this.#launch();
    });
  }

  #clear(state: McpServerState): void {
    this.#child = undefined;
    this.#tools = [];
    this.#byName = new Map();
    this.#state = state;
  }

  #stop(child: ServerChild): void {
    const stopping = child.stop();
    this.#stopping.add(stopping);
    void stopping.then(() => this.#stopping.delete(stopping));
  }
}

function boundedTimeout(ms: number): number {
  if (!Number.isFinite(ms)) return MCP_LIMITS.timeout_ms_default;
  return Math.min(Math.max(ms, MCP_LIMITS.timeout_ms_min), MCP_LIMITS.timeout_ms_max);
}
