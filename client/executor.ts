import { EventEmitter } from 'node:events';
import type { Clock } from '../core/clock.js';
import {
  type ExecutorRecord,
  type ExecutorStore,
  KEPT_TURNS,
  type KeptCall,
  type KeptTurn,
  keptCall,
} from './executor-store.js';
import { meansNoDaemon } from './no-daemon-error.js';
import { answer, operationId, typedCall } from './typed-call.js';
import type { EventFrame, WireClient } from './wire-client.js';
import type {
  ExecutorAttach,
  ExecutorCreateResult,
  ExecutorRotateResult,
  OperationLookupResult,
  PendingCall,
  ToolCallPayload,
  ToolCancelPayload,
  ToolOutcome,
} from './wire-types.js';

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
const HANDLER_FAILED = 'the tool failed';
const RESULT_REFUSED = 'the tool returned a value its output schema does not allow';
const NEVER_RECEIVED = 'the call was lost on its way to the application and was not run';
const NO_HANDLER = 'the application has no handler for this tool';
const INTERRUPTED = 'the application stopped while the call ran, and did not run it again';

/** What a result must echo of its call. */
type Binding = Pick<ToolCallPayload, 'turn_id' | 'resource_id' | 'revision_id' | 'revision_sha256'>;

interface Retained {
  sessionId: string;
  binding: Binding;
  outcome: ToolOutcome;
  /** Every operation id a submission of this result used: one of them may have been accepted. */
  operations: string[];
  inFlight: boolean;
  /** The handler's value was refused by the output schema, and a fixed error replaced it. */
  refused: boolean;
}

/**
 * The application side of tool calls, over the daemon's executor methods. It runs each dispatched call's
 * handler exactly once, retains each result until the daemon acknowledged it, and after a dropped
 * connection resumes on a new one and submits the retained results with the new generation, reconciling
 * submissions whose answer was lost with `operation.lookup`. The resume secret is kept in memory, and in
 * the `store` when one is given, so that a restarted application can resume the executor
 * (`ApplicationExecutor.resume`).
 */
export class ApplicationExecutor extends EventEmitter<ExecutorEvents> {
  readonly #handlers: Record<string, ToolHandler>;
  readonly #reconnect: () => Promise<WireClient>;
  readonly #retryDelayMs: number;
  readonly #clock: Clock | null;
  readonly #store: ExecutorStore | null;
  readonly #instanceId: string;
  readonly #onInterrupted: ExecutorOptions['onInterrupted'];
  readonly #id: string;
  #generation: number;
  #secret: string;
  /** A rotation's candidate secret, kept beside the current one until the rotation is known to be done. */
  #candidate: string | null = null;
  #client: WireClient;
  /** Whether the executor opened its connection itself (after a drop) and so closes it with itself. */
  #ownsConnection = false;
  #recovering: Promise<void> | null = null;
  #closed = false;
  #lost: ExecutorLostError | null = null;
  readonly #states = new Map<string, CallState>();
  readonly #retained = new Map<string, Retained>();
  readonly #running = new Map<string, AbortController>();
  readonly #stateWaiters = new Set<() => void>();
  /** The calls and turns the store keeps, by call id and in start order. */
  readonly #kept = new Map<string, KeptCall>();
  #turns: KeptTurn[] = [];
  #saving: Promise<void> = Promise.resolve();

  private constructor(
    client: WireClient,
    identity: { executor_id: string; executor_generation: number; resume_secret: string },
    options: ExecutorOptions,
  ) {
    super();
    this.#handlers = options.handlers;
    this.#reconnect = options.reconnect;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#clock = options.clock ?? null;
    this.#store = options.store ?? null;
    this.#instanceId = options.instanceId ?? '';
    this.#onInterrupted = options.onInterrupted;
    this.#id = identity.executor_id;
    this.#generation = identity.executor_generation;
    this.#secret = identity.resume_secret;
    this.#client = client;
  }

  /**
   * Creates an executor on `client` and confirms it at once, well within the daemon's 60 s window; with a
   * store, the executor is kept there before it is confirmed.
   */
  static async create(client: WireClient, options: ExecutorOptions): Promise<ApplicationExecutor> {
    const created = await typedCall<ExecutorCreateResult>(
      client,
      'executor.create',
      {},
      { operation: operationId() },
    );
    const executor = new ApplicationExecutor(client, created, options);
    executor.#listen(client);
    await executor.#persist();
    await typedCall<ExecutorAttach>(
      client,
      'executor.confirm',
      { executor_id: created.executor_id, resume_secret: created.resume_secret },
      { operation: operationId() },
    );
    return executor;
  }

  /**
   * Resumes the executor `record` keeps, on `client` (after a restart of the application), as
   * docs/protocol.md section 6 orders it: `executor.resume` fences the executor's old connection and
   * answers its open calls, then the secret is rotated. Null when no proof resumes it any more (the store
   * is then cleared). Nothing is submitted yet: claim the sessions of `pending` first, then call
   * `deliverRecovered()`.
   */
  static async resume(
    client: WireClient,
    record: ExecutorRecord,
    options: ExecutorOptions,
  ): Promise<{ executor: ApplicationExecutor; pending: readonly PendingCall[] } | null> {
    const executor = new ApplicationExecutor(client, record, options);
    executor.#candidate = record.candidate_secret;
    executor.#turns = [...record.turns];
    for (const call of record.calls) {
      executor.#kept.set(call.call_id, call);
      executor.#states.set(call.call_id, call.outcome === null ? 'running' : 'retained');
    }
    executor.#listen(client);
    const resumed = await executor.#resume(client);
    if (resumed === null) {
      await executor.#becomeLost();
      return null;
    }
    executor.#generation = resumed.executor_generation;
    // The rotation keeps the record, with the new generation, before it is confirmed.
    await executor.rotate();
    return { executor, pending: resumed.pending_calls };
  }

  get id(): string {
    return this.#id;
  }

  get generation(): number {
    return this.#generation;
  }

  /** The connection the executor is attached to now (a turn with tools starts on it). */
  get connection(): WireClient {
    return this.#client;
  }

  /** Set once the executor could not be resumed after a drop. */
  get lost(): ExecutorLostError | null {
    return this.#lost;
  }

  /** What became of each call this executor received, by call id. */
  get calls(): ReadonlyMap<string, CallState> {
    return this.#states;
  }

  /** The turns started with this executor that the store keeps (the newest 32), oldest first. */
  get turns(): readonly KeptTurn[] {
    return this.#turns;
  }

  /** Resolves once `callId` is settled (accepted, refused or not_accepted). */
  async settled(callId: string): Promise<SettledState> {
    for (;;) {
      const state = this.#states.get(callId);
      if (state === 'accepted' || state === 'refused' || state === 'not_accepted') return state;
      await new Promise<void>((resolve) => this.#stateWaiters.add(resolve));
    }
  }

  /** Keeps `turnId` (started with this executor) in the store, for an application that restarts. */
  async keepTurn(sessionId: string, turnId: string): Promise<void> {
    this.#turns = [...this.#turns, { session_id: sessionId, turn_id: turnId }].slice(-KEPT_TURNS);
    await this.#persist();
  }

  /**
   * Replaces the resume secret. The old secret stays the proof until the daemon confirmed the new
   * one; if the connection drops meanwhile, recovery tries the new secret first, then the old. With a
   * store, the new secret is kept before it is confirmed.
   */
  async rotate(): Promise<void> {
    const client = this.#client;
    const identity = { executor_id: this.#id, executor_generation: this.#generation };
    const rotated = await typedCall<ExecutorRotateResult>(client, 'executor.rotate', identity, {
      operation: operationId(),
    });
    this.#candidate = rotated.resume_secret;
    await this.#persist();
    await typedCall(
      client,
      'executor.rotate_confirm',
      { ...identity, resume_secret: rotated.resume_secret },
      { operation: operationId() },
    );
    this.#promote(rotated.resume_secret);
    await this.#persist();
  }

  /**
   * After `resume`: submits the results kept for `pending` calls, decides the calls whose handler was
   * running when the application stopped (`onInterrupted`; by default a fixed error, never run again),
   * answers the calls that never reached the application, and settles the kept calls no longer pending.
   */
  async deliverRecovered(pending: readonly PendingCall[]): Promise<void> {
    const open = new Map(pending.map((call) => [call.call_id, call]));
    for (const kept of [...this.#kept.values()]) {
      if (open.get(kept.call_id)?.status === 'pending') {
        this.#retainKept(kept, kept.outcome ?? (await this.#decideInterrupted(kept)));
        void this.#submit(kept.call_id);
      } else if (kept.operations.length > 0) {
        // No longer pending: one of its submissions may have been accepted.
        this.#retainKept(kept, kept.outcome ?? interruptedOutcome());
        void this.#reconcile(kept.call_id);
      } else this.#settle(kept.call_id, 'not_accepted');
    }
    this.#answerUnreceived(pending);
    await this.#persist();
  }

  /**
   * Releases the executor: its proofs stop working and the store forgets it. A connection the executor
   * opened itself (after a drop) is closed; the client's own connection is left open.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const client = this.#client;
    if (!client.closed && this.#lost === null) {
      await answer(
        client,
        'executor.release',
        { executor_id: this.#id, executor_generation: this.#generation },
        { operation: operationId() },
      ).catch(() => {});
    }
    if (this.#ownsConnection) client.close();
    for (const controller of this.#running.values()) controller.abort('cancelled');
    this.#kept.clear();
    await this.#save(null);
    this.#wake();
  }

  #listen(client: WireClient): void {
    const stopEvents = client.onEvent((frame) => {
      if (this.#closed) return false;
      if (frame.payload.executor_id !== undefined && frame.payload.executor_id !== this.#id) return false;
      if (frame.event === 'turn.application_tool_call') this.#dispatched(frame);
      else if (frame.event === 'turn.application_tool_cancel') this.#cancelled(frame);
      else return false;
      return true;
    });
    client.onClose(() => {
      stopEvents();
      if (client !== this.#client || this.#closed || this.#lost !== null) return;
      this.emit('connection_lost');
      this.#recover();
    });
  }

  #dispatched(frame: EventFrame): void {
    const payload = frame.payload as unknown as ToolCallPayload;
    // The daemon dispatches a call once; a repeated call id is never run again whatever arrives.
    if (this.#states.has(payload.call_id)) return;
    this.#setState(payload.call_id, 'running');
    void this.#execute(frame.session_id!, payload);
  }

  #cancelled(frame: EventFrame): void {
    const payload = frame.payload as unknown as ToolCancelPayload;
    this.#running.get(payload.call_id)?.abort(payload.reason);
  }

  async #execute(sessionId: string, payload: ToolCallPayload): Promise<void> {
    const kept = keptCall(sessionId, payload);
    this.#kept.set(payload.call_id, kept);
    // Kept before the handler runs: a restarted application knows the call may have run.
    await this.#persist();
    this.#retainKept(kept, await this.#run(kept));
    // Kept before it is submitted: a restarted application delivers it instead of deciding again.
    await this.#persist();
    await this.#submit(payload.call_id);
  }

  async #run(kept: KeptCall): Promise<ToolOutcome> {
    const handler = this.#handlers[kept.name];
    if (handler === undefined) return { status: 'error', code: 'execution_failed', message: NO_HANDLER };
    const controller = new AbortController();
    this.#running.set(kept.call_id, controller);
    const call: ToolCall = {
      sessionId: kept.session_id,
      turnId: kept.turn_id,
      callId: kept.call_id,
      name: kept.name,
      timeoutMs: kept.timeout_ms,
      signal: controller.signal,
    };
    try {
      return { status: 'success', value: await handler(kept.arguments, call) };
    } catch (error) {
      if (error instanceof ToolFailure) return failureOutcome(error);
      return { status: 'error', code: 'execution_failed', message: HANDLER_FAILED };
    } finally {
      this.#running.delete(kept.call_id);
    }
  }

  async #decideInterrupted(kept: KeptCall): Promise<ToolOutcome> {
    if (this.#onInterrupted === undefined) return interruptedOutcome();
    let decision: InterruptedDecision;
    try {
      decision = await this.#onInterrupted({
        sessionId: kept.session_id,
        turnId: kept.turn_id,
        callId: kept.call_id,
        name: kept.name,
        arguments: kept.arguments,
      });
    } catch {
      return { status: 'error', code: 'execution_failed', message: HANDLER_FAILED };
    }
    if ('run' in decision) {
      this.#setState(kept.call_id, 'running');
      return this.#run(kept);
    }
    if ('value' in decision) return { status: 'success', value: decision.value };
    return failureOutcome(decision.failure);
  }

  /** Retains a kept call's outcome for submission, keeping the operations of its earlier submissions. */
  #retainKept(kept: KeptCall, outcome: ToolOutcome): void {
    kept.outcome = outcome;
    this.#retain(kept.call_id, {
      sessionId: kept.session_id,
      binding: kept,
      outcome,
      operations: kept.operations,
      inFlight: false,
      refused: false,
    });
  }

  #retain(callId: string, retained: Retained): void {
    this.#retained.set(callId, retained);
    this.#setState(callId, 'retained');
  }

  /** Submits a retained result on the current connection at the current generation. */
  async #submit(callId: string): Promise<void> {
    const retained = this.#retained.get(callId);
    if (retained === undefined || retained.inFlight || this.#recovering !== null || this.#closed) return;
    const client = this.#client;
    const generation = this.#generation;
    const operation = operationId();
    retained.operations.push(operation);
    retained.inFlight = true;
    // Kept before it is sent: a restarted application looks this submission up instead of guessing.
    await this.#persist();
    const response = await answer(
      client,
      'turn.application_tool_result',
      {
        turn_id: retained.binding.turn_id,
        call_id: callId,
        executor_id: this.#id,
        executor_generation: generation,
        resource_id: retained.binding.resource_id,
        revision_id: retained.binding.revision_id,
        revision_sha256: retained.binding.revision_sha256,
        outcome: retained.outcome,
      },
      { session: retained.sessionId, operation },
    ).catch(() => null);
    retained.inFlight = false;
    // No answer: the connection dropped, and recovery submits again or reconciles.
    if (response === null) return;
    if (response.ok) return this.#settle(callId, retained.refused ? 'refused' : 'accepted');
    switch (response.error?.code) {
      case 'unknown_turn':
        // Not pending any more: an earlier submission was accepted, or the call ended without us.
        return this.#reconcile(callId);
      case 'stale_connection':
        if (generation !== this.#generation) return this.#submit(callId);
        return;
      case 'invalid_payload':
        if (retained.outcome.status === 'success') {
          retained.outcome = { status: 'error', code: 'execution_failed', message: RESULT_REFUSED };
          retained.refused = true;
          this.emit('result_refused', { callId, name: this.#kept.get(callId)?.name ?? '' });
          return this.#submit(callId);
        }
        return;
      default:
        // A transient refusal (limit_exceeded, shutting_down): try again; a call that ends meanwhile
        // answers unknown_turn and settles.
        await this.#delay();
        return this.#submit(callId);
    }
  }

  /** Decides from the lookups of earlier submissions whether one of them was accepted. */
  async #reconcile(callId: string): Promise<void> {
    const retained = this.#retained.get(callId);
    if (retained === undefined) return;
    for (const operation of retained.operations) {
      for (;;) {
        let lookup: OperationLookupResult;
        try {
          lookup = await typedCall<OperationLookupResult>(this.#client, 'operation.lookup', {
            operation_id: operation,
          });
        } catch {
          return; // the connection dropped: recovery reconciles again
        }
        if (lookup.status === 'accepted') {
          await this.#delay();
          continue;
        }
        if (lookup.status === 'completed')
          return this.#settle(callId, retained.refused ? 'refused' : 'accepted');
        break;
      }
    }
    this.#settle(callId, 'not_accepted');
  }

  #settle(callId: string, state: SettledState): void {
    this.#retained.delete(callId);
    this.#forget(callId);
    this.#setState(callId, state);
  }

  /** Drops a call from the store once nothing more can happen to it. */
  #forget(callId: string): void {
    if (this.#kept.delete(callId)) void this.#persist();
  }

  #setState(callId: string, state: CallState): void {
    this.#states.set(callId, state);
    this.#wake();
  }

  #wake(): void {
    const waiters = [...this.#stateWaiters];
    this.#stateWaiters.clear();
    for (const wake of waiters) wake();
  }

  #recover(): void {
    if (this.#closed || this.#recovering !== null) return;
    this.#recovering = this.#reattach().then((pending) => {
      this.#recovering = null;
      if (pending !== null) this.#afterResume(pending);
    });
  }

  /**
   * Connects again until the executor is resumed on a live connection, and returns its open calls;
   * null once the executor is closed or lost.
   */
  async #reattach(): Promise<readonly PendingCall[] | null> {
    let stopped = false;
    while (!this.#closed) {
      let client: WireClient | null = null;
      try {
        client = await this.#reconnect();
        if (this.#closed) break;
        this.#listen(client);
        const resumed = await this.#resume(client);
        if (resumed === null) {
          client.close();
          await this.#becomeLost();
          return null;
        }
        this.#client = client;
        this.#ownsConnection = true;
        this.#generation = resumed.executor_generation;
        if (client.closed) continue;
        void this.#persist();
        this.emit('resumed', this.#generation);
        return resumed.pending_calls;
      } catch (error) {
        client?.close();
        if (meansNoDaemon(error) && !stopped) {
          stopped = true;
          this.emit('daemon_stopped');
        }
        await this.#delay();
      }
    }
    return null;
  }

  async #becomeLost(): Promise<void> {
    this.#lost = new ExecutorLostError();
    for (const callId of this.#retained.keys()) this.#settle(callId, 'not_accepted');
    this.#kept.clear();
    await this.#save(null);
    this.emit('lost', this.#lost);
  }

  /** Resumes with the rotation's candidate first (it may have been confirmed), then with the current secret. */
  async #resume(client: WireClient): Promise<ExecutorAttach | null> {
    const secrets = this.#candidate === null ? [this.#secret] : [this.#candidate, this.#secret];
    for (const secret of secrets) {
      const response = await answer(
        client,
        'executor.resume',
        { executor_id: this.#id, resume_secret: secret },
        { operation: operationId() },
      );
      if (response.ok) {
        this.#promote(secret);
        return response.result as ExecutorAttach;
      }
      if (response.error?.code !== 'unauthorized') throw new Error(response.error?.code);
    }
    return null;
  }

  #promote(secret: string): void {
    if (secret === this.#candidate || this.#candidate === null) {
      this.#secret = secret;
      this.#candidate = null;
    } else {
      // The old secret resumed: the daemon cancelled the candidate.
      this.#candidate = null;
    }
  }

  #afterResume(pending: readonly PendingCall[]): void {
    const open = new Map(pending.map((call) => [call.call_id, call]));
    for (const callId of [...this.#retained.keys()]) {
      if (open.get(callId)?.status === 'pending') void this.#submit(callId);
      else void this.#reconcile(callId);
    }
    this.#answerUnreceived(pending);
  }

  /**
   * Answers the pending calls this executor never received: dispatched to a connection that closed
   * before the call reached it, the daemon never sends them again and their arguments are not
   * recoverable, so they are answered as failed without running.
   */
  #answerUnreceived(pending: readonly PendingCall[]): void {
    for (const call of pending) {
      if (call.status !== 'pending' || this.#states.has(call.call_id)) continue;
      this.#retain(call.call_id, {
        sessionId: call.session_id,
        binding: call,
        outcome: { status: 'error', code: 'execution_failed', message: NEVER_RECEIVED },
        operations: [],
        inFlight: false,
        refused: false,
      });
      void this.#submit(call.call_id);
    }
  }

  /** Writes the executor's record to the store, after any write still in progress. */
  #persist(): Promise<void> {
    if (this.#store === null || this.#closed || this.#lost !== null) return this.#saving;
    return this.#save(this.#record());
  }

  #save(record: ExecutorRecord | null): Promise<void> {
    const store = this.#store;
    if (store === null) return Promise.resolve();
    this.#saving = this.#saving
      .then(() => store.save(record))
      .catch((error: unknown) => {
        this.emit('store_failed', error);
      });
    return this.#saving;
  }

  #record(): ExecutorRecord {
    return {
      version: 1,
      instance_id: this.#instanceId,
      executor_id: this.#id,
      executor_generation: this.#generation,
      resume_secret: this.#secret,
      candidate_secret: this.#candidate,
      calls: [...this.#kept.values()],
      turns: this.#turns,
    };
  }

  #delay(): Promise<void> {
    return new Promise((resolve) => {
      // A plain timer holds the process open while retained results wait to be delivered.
      if (this.#clock === null) setTimeout(resolve, this.#retryDelayMs);
      else this.#clock.setTimeout(resolve, this.#retryDelayMs);
    });
  }
}

function failureOutcome(failure: ToolFailure): ToolOutcome {
  return { status: 'error', code: failure.code, message: failure.message };
}

function interruptedOutcome(): ToolOutcome {
  return { status: 'error', code: 'execution_failed', message: INTERRUPTED };
}
