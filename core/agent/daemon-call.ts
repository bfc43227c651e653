import type { BuiltinToolName } from '../resources/builtin-tools.js';
import type { ExternalEffects } from '../turns/application-call.js';

/** What a built-in tool gave: the text the model reads, or a fixed error. */
export type BuiltinOutcome = { ok: true; output: string } | { ok: false; code: string; message: string };

export type BuiltinCallStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/**
 * One call of a built-in tool: admitted, bound durably, run once (never again, not after a restart), and
 * ended by its outcome or by its turn. Its arguments stay in memory for the run only.
 */
export class BuiltinCall {
  readonly callId: string;
  readonly providerCallId: string;
  readonly name: BuiltinToolName;
  /** The `spawn_agent` call whose subagent made this call, or null for the turn's own calls. */
  readonly parentCallId: string | null;
  readonly arguments: Record<string, unknown>;
  #status: BuiltinCallStatus = 'pending';
  #effects: ExternalEffects = 'not_dispatched';

  constructor(init: {
    callId: string;
    providerCallId: string;
    name: BuiltinToolName;
    parentCallId: string | null;
    arguments: Record<string, unknown>;
  }) {
    this.callId = init.callId;
    this.providerCallId = init.providerCallId;
    this.name = init.name;
    this.parentCallId = init.parentCallId;
    this.arguments = init.arguments;
  }

  get status(): BuiltinCallStatus {
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
  reported(outcome: BuiltinOutcome): void {
    if (this.#status !== 'pending') return;
    this.#status = outcome.ok ? 'succeeded' : 'failed';
    this.#effects = 'reported';
  }

  /** Its turn ended first: a call that ran keeps uncertain effects. */
  cancelled(): void {
    if (this.#status === 'pending') this.#status = 'cancelled';
  }
}
