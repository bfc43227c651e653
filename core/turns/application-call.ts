import type { Clock, Deadline } from '../clock.js';
import { deadlineAt } from '../clock.js';
import type { ToolContract } from '../resources/tool-contract.js';
import type { ExternalEffects } from '../tool-results/external-effects.js';
import type { AcceptedExecutor, ToolManifest } from './application-manifest.js';

export type CallStatus = 'waiting_for_executor' | 'pending' | 'succeeded' | 'failed' | 'cancelled';
export type WaitKind = 'availability' | 'execution';

/** What the executor reported, or what the daemon decided in its place. */
export type CallOutcome =
  | { status: 'success'; value: Record<string, unknown> }
  | { status: 'error'; code: string; message: string };

/** Why a call ended without a reported outcome. */
export type CallFailure = 'tool_timeout' | 'executor_unavailable' | 'cancelled' | 'refused';

export interface CallSettlement {
  outcome: CallOutcome | null;
  failure: CallFailure | null;
}

export interface CallIdentity {
  readonly turnId: string;
  readonly sessionId: string;
  readonly callId: string;
  readonly providerCallId: string;
  readonly tool: ToolManifest;
  readonly contract: ToolContract;
  readonly executor: AcceptedExecutor;
  /** The model's arguments, a JSON object text; kept in memory for dispatch only, never shown or stored. */
  readonly arguments: string;
}

/** The members that name a call's binding, as the wire and the history write them. */
export function bindingMembers(identity: CallIdentity) {
  return {
    turn_id: identity.turnId,
    call_id: identity.callId,
    provider_call_id: identity.providerCallId,
    name: identity.tool.name,
    resource_id: identity.tool.resource_id,
    revision_id: identity.tool.revision_id,
    revision_sha256: identity.tool.revision_sha256,
  };
}

/**
 * One application callback of a turn: created when the model asked for the tool, dispatched to the
 * executor once (never again), and settled exactly once by a result, a deadline, a stop or a refusal.
 * Its deadline is the tool's `timeout_ms` from dispatch, or the availability bound from the moment it
 * needed an absent executor; neither is reset by a reconnect.
 */
export class ApplicationCall {
  readonly identity: CallIdentity;
  #status: CallStatus = 'waiting_for_executor';
  #effects: ExternalEffects = 'not_dispatched';
  #deadline: Deadline | null = null;
  #waitKind: WaitKind | null = null;
  #bound = false;
  #reporting: Promise<void> | null = null;
  #settle!: (settlement: CallSettlement) => void;
  readonly settled: Promise<CallSettlement>;

  constructor(identity: CallIdentity) {
    this.identity = identity;
    this.settled = new Promise((resolve) => {
      this.#settle = resolve;
    });
  }

  get status(): CallStatus {
    return this.#status;
  }

  get effects(): ExternalEffects {
    return this.#effects;
  }

  get waitKind(): WaitKind | null {
    return this.#waitKind;
  }

  /** Whether the call's binding is durable: only a bound call is dispatched or listed as pending. */
  get bound(): boolean {
    return this.#bound;
  }

  /** The binding was committed. */
  markBound(): void {
    this.#bound = true;
  }

  /**
   * While an accepted result is on its way to the store: settles once it is reported (or lost with a failed
   * write). No other result is taken meanwhile, and nothing else may end the call: its ending is that result.
   */
  get reporting(): Promise<void> | null {
    return this.#reporting;
  }

  /**
   * An accepted result arrived in time and is being made durable by `reporting`, which reports it once it
   * is: the execution deadline stops meanwhile.
   */
  resultAdmitted(reporting: Promise<void>): void {
    if (!this.open) return;
    this.#deadline?.cancel();
    this.#deadline = null;
    this.#reporting = reporting.catch(() => {});
  }

  /** The admitted result could not be made durable: the call is open again, to end with its turn. */
  resultLost(): void {
    this.#reporting = null;
  }

  get open(): boolean {
    return this.#status === 'waiting_for_executor' || this.#status === 'pending';
  }

  /**
   * Whole milliseconds left before the call's current deadline, rounded up so that a deadline not yet
   * reached never reads 0; null once settled. Reading renews nothing.
   */
  remainingMs(clock: Clock): number | null {
    if (!this.open || this.#deadline === null) return null;
    return Math.max(0, Math.ceil(this.#deadline.at - clock.now()));
  }

  /** The executor is away: wait for it at most `ms`, once; a later wait keeps the first deadline. */
  awaitExecutor(clock: Clock, ms: number, onExpired: () => void): void {
    if (!this.open || this.#deadline !== null) return;
    this.#waitKind = 'availability';
    this.#deadline = deadlineAt(clock, clock.now() + ms, onExpired);
  }

  /** Dispatched to the executor: effects become uncertain and the execution deadline starts. */
  dispatched(clock: Clock, onExpired: () => void): void {
    if (this.#status !== 'waiting_for_executor') return;
    this.#deadline?.cancel();
    this.#status = 'pending';
    this.#effects = 'uncertain';
    this.#waitKind = 'execution';
    this.#deadline = deadlineAt(clock, clock.now() + this.identity.tool.timeout_ms, onExpired);
  }

  /** The executor's accepted result: success or error, the effects are reported. */
  report(outcome: CallOutcome): void {
    if (!this.open) return;
    this.#finish(outcome.status === 'success' ? 'succeeded' : 'failed');
    this.#effects = 'reported';
    this.#settle({ outcome, failure: null });
  }

  /** Ends the call without a reported outcome. */
  fail(failure: CallFailure, outcome: CallOutcome | null = null): void {
    if (!this.open) return;
    this.#finish(failure === 'cancelled' ? 'cancelled' : 'failed');
    this.#settle({ outcome, failure });
  }

  #finish(status: CallStatus): void {
    this.#status = status;
    this.#waitKind = null;
    this.#deadline?.cancel();
    this.#deadline = null;
  }
}
