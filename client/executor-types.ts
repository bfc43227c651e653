import type { Clock } from '../core/clock.js';
import type { ExecutorStore } from './executor-store.js';
import type { WireClient } from './wire-client.js';
import type { ToolOutcome } from './wire-types.js';

/** One application call as its handler sees it. */
export interface ToolCall {
  sessionId: string;
  turnId: string;
  callId: string;
  name: string;
  timeoutMs: number;
  /** Aborted when the daemon cancels the call (a stop, a timeout): advisory, nothing is rolled back. */
  signal: AbortSignal;
}

/** Runs one call; the returned object is the result value. Throw a ToolFailure to report an error outcome. */
export type ToolHandler = (
  args: Record<string, unknown>,
  call: ToolCall,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** An error outcome a handler reports on purpose; its message reaches the model. */
export class ToolFailure extends Error {
  override readonly name = 'ToolFailure';
  readonly code: 'execution_failed' | 'permission_denied';
  constructor(code: 'execution_failed' | 'permission_denied', message: string) {
    super(message);
    this.code = code;
  }
}

/** The executor could not prove itself again after a drop (released, expired, or the daemon restarted). */
export class ExecutorLostError extends Error {
  override readonly name = 'ExecutorLostError';
  constructor() {
    super('the executor is gone: its proof no longer resumes it');
  }
}

/**
 * What became of a call this executor received: `accepted` once the daemon acknowledged its result,
 * `refused` when the daemon refused the handler's value against the tool's output schema and accepted
 * a fixed error in its place, `not_accepted` when the call ended without a result (a stop, a timeout, a
 * turn that ended), `running` while the handler runs and `retained` while the result waits for its
 * acknowledgment.
 */
export type CallState = 'running' | 'retained' | 'accepted' | 'refused' | 'not_accepted';

/** The states a call ends in. */
export type SettledState = 'accepted' | 'refused' | 'not_accepted';

/** A call whose handler was running when the application stopped, as a restarted executor finds it. */
export interface InterruptedCall {
  sessionId: string;
  turnId: string;
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * What to do with an interrupted call: run its handler again (`run`), deliver a result the application
 * kept itself (`value`), or report an error the model sees (`failure`).
 */
export type InterruptedDecision =
  | { run: true }
  | { value: Record<string, unknown> }
  | { failure: ToolFailure };

/** The events an executor emits, with their arguments. */
export interface ExecutorEvents {
  /** The executor's connection dropped; it reconnects and resumes on its own. */
  connection_lost: [];
  /** No daemon listens on the socket any more (it stopped); the executor keeps trying until closed. */
  daemon_stopped: [];
  /** Resumed on a new connection, at this generation. */
  resumed: [generation: number];
  /** No proof resumes the executor any more (released, expired, or the daemon restarted). */
  lost: [error: ExecutorLostError];
  /** The daemon refused a handler's value against its output schema; the model got a fixed error. */
  result_refused: [call: { callId: string; name: string }];
  /** The store could not keep the executor's record: a crash now could not be recovered from. */
  store_failed: [error: unknown];
}

export interface ExecutorOptions {
  /** Tool handlers by tool name. A call of a name without a handler is answered `execution_failed`. */
  handlers: Record<string, ToolHandler>;
  /** Opens a new connection, initialized with the profile: used after every drop. */
  reconnect: () => Promise<WireClient>;
  /** Wait between attempts to reconnect or to reconcile an outcome still in progress. */
  retryDelayMs?: number;
  /** The time retry waits are read from (default: Node's timers, which keep the process alive). */
  clock?: Clock;
  /** Keeps the executor's identity, secret, calls and turns across a restart of the application. */
  store?: ExecutorStore;
  /** The instance of the daemon the executor lives in (`initialize`'s `instance_id`), for the store. */
  instanceId?: string;
  /** For a resumed executor: what to do with a call whose handler ran when the application stopped. */
  onInterrupted?: (call: InterruptedCall) => InterruptedDecision | Promise<InterruptedDecision>;
}

/** Fixed texts: a handler's own error text never reaches the model unless it threw a ToolFailure. */
export const HANDLER_FAILED = 'the tool failed';
export const RESULT_REFUSED = 'the tool returned a value its output schema does not allow';
export const NEVER_RECEIVED = 'the call was lost on its way to the application and was not run';
export const NO_HANDLER = 'the application has no handler for this tool';
export const INTERRUPTED = 'the application stopped while the call ran, and did not run it again';

export function failureOutcome(failure: ToolFailure): ToolOutcome {
  return { status: 'error', code: failure.code, message: failure.message };
}

export function interruptedOutcome(): ToolOutcome {
  return { status: 'error', code: 'execution_failed', message: INTERRUPTED };
}
