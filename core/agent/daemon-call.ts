import type { ExternalEffects } from '../tool-results/external-effects.js';

/** What a tool the daemon runs gave: the text the model reads, or a fixed error. */
export type ToolOutcome = { ok: true; output: string } | { ok: false; code: string; message: string };

export type DaemonCallStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/** Who runs a daemon call: the daemon itself, or one of the MCP servers it started. */
export type DaemonToolKind = 'builtin' | 'mcp';

/**
 * One call of a tool the daemon runs, a built-in tool or an MCP server's: admitted, bound durably, run once
 * (never again, not after a restart), and ended by its outcome or by its turn. Its arguments stay in memory
 * for the run only.
 */
export class DaemonCall {
  readonly callId: string;
  readonly providerCallId: string;
  /** The tool's name as the model sees it (`mcp_<server>_<tool>` for an MCP server's). */
  readonly name: string;
  readonly kind: DaemonToolKind;
  /** The `spawn_agent` call whose subagent made this call, or null for the turn's own calls. */
  readonly parentCallId: string | null;
  readonly arguments: Record<string, unknown>;
  #status: DaemonCallStatus = 'pending';
  #effects: ExternalEffects = 'not_dispatched';

  constructor(init: {
    callId: string;
    providerCallId: string;
    name: string;
    kind: DaemonToolKind;
    parentCallId: string | null;
    arguments: Record<string, unknown>;
  }) {
    this.callId = init.callId;
    this.providerCallId = init.providerCallId;
    this.name = init.name;
    this.kind = init.kind;
    this.parentCallId = init.parentCallId;
    this.arguments = init.arguments;
  }

  get status(): DaemonCallStatus {
    return this.#status;
  }

  get effects(): ExternalEffects {
    return this.#effects;
  }

  /** The tool began to run: whatever it does may have happened from now on. */
  started(): void {
    this.#effects = 'uncertain';
  }

  /** Its outcome is durable. */
  reported(outcome: ToolOutcome): void {
    if (this.#status !== 'pending') return;
    this.#status = outcome.ok ? 'succeeded' : 'failed';
    this.#effects = 'reported';
  }

  /** Its turn ended first: a call that ran keeps uncertain effects. */
  cancelled(): void {
    if (this.#status === 'pending') this.#status = 'cancelled';
  }
}
