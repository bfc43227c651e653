import { EventEmitter } from 'node:events';
import type { Clock } from '../core/clock.js';
import { decideInterrupted, runHandler } from './call-handling.js';
import { CallStates } from './call-states.js';
import { ExecutorKeeping } from './executor-keeping.js';
import { ExecutorProof } from './executor-proof.js';
import { reattach } from './executor-reattach.js';
import { type ExecutorRecord, type KeptCall, type KeptTurn, keptCall } from './executor-store.js';
import {
  type CallState,
  type ExecutorEvents,
  ExecutorLostError,
  type ExecutorOptions,
  interruptedOutcome,
  NEVER_RECEIVED,
  type SettledState,
  type ToolHandler,
} from './executor-types.js';
import { ResultDelivery } from './result-delivery.js';
import { answer, operationId, typedCall } from './typed-call.js';
import type { EventFrame, WireClient } from './wire-client.js';
import type {
  ExecutorAttach,
  ExecutorCreateResult,
  ExecutorRotateResult,
  PendingCall,
  ToolCallPayload,
  ToolCancelPayload,
  ToolOutcome,
} from './wire-types.js';

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
  readonly #onInterrupted: ExecutorOptions['onInterrupted'];
  readonly #id: string;
  #generation: number;
  readonly #proof: ExecutorProof;
  #client: WireClient;
  /** Whether the executor opened its connection itself (after a drop) and so closes it with itself. */
  #ownsConnection = false;
  #recovering: Promise<void> | null = null;
  #closed = false;
  #lost: ExecutorLostError | null = null;
  readonly #states = new CallStates();
  readonly #delivery: ResultDelivery;
  readonly #running = new Map<string, AbortController>();
  /** The calls and turns the store keeps, by call id and in start order. */
  readonly #keeping: ExecutorKeeping;

  private constructor(
    client: WireClient,
    identity: { executor_id: string; executor_generation: number; resume_secret: string },
    options: ExecutorOptions,
    candidate: string | null = null,
  ) {
    super();
    this.#handlers = options.handlers;
    this.#reconnect = options.reconnect;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#clock = options.clock ?? null;
    this.#keeping = new ExecutorKeeping(options.store ?? null, options.instanceId ?? '', (error) =>
      this.emit('store_failed', error),
    );
    this.#onInterrupted = options.onInterrupted;
    this.#id = identity.executor_id;
    this.#generation = identity.executor_generation;
    this.#proof = new ExecutorProof(identity.resume_secret, candidate);
    this.#client = client;
    this.#delivery = new ResultDelivery({
      executorId: this.#id,
      attachment: () =>
        this.#recovering !== null || this.#closed
          ? null
          : { client: this.#client, generation: this.#generation },
      generation: () => this.#generation,
      client: () => this.#client,
      persist: () => this.#persist(),
      delay: () => this.#delay(),
      retained: (callId) => this.#states.set(callId, 'retained'),
      settled: (callId, state) => {
        this.#forget(callId);
        this.#states.set(callId, state);
      },
      refused: (callId) =>
        this.emit('result_refused', { callId, name: this.#keeping.calls.get(callId)?.name ?? '' }),
    });
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
    const executor = new ApplicationExecutor(client, record, options, record.candidate_secret);
    executor.#keeping.restore(record);
    for (const call of record.calls) {
      executor.#states.set(call.call_id, call.outcome === null ? 'running' : 'retained');
    }
    executor.#listen(client);
    const resumed = await executor.#proof.resumeOn(client, executor.#id);
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
    return this.#states.all;
  }

  /** The turns started with this executor that the store keeps (the newest 32), oldest first. */
  get turns(): readonly KeptTurn[] {
    return this.#keeping.turns;
  }

  /** Resolves once `callId` is settled (accepted, refused or not_accepted). */
  settled(callId: string): Promise<SettledState> {
    return this.#states.settled(callId);
  }

  /** Keeps `turnId` (started with this executor) in the store, for an application that restarts. */
  async keepTurn(sessionId: string, turnId: string): Promise<void> {
    this.#keeping.keepTurn(sessionId, turnId);
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
    this.#proof.propose(rotated.resume_secret);
    await this.#persist();
    await typedCall(
      client,
      'executor.rotate_confirm',
      { ...identity, resume_secret: rotated.resume_secret },
      { operation: operationId() },
    );
    this.#proof.promote(rotated.resume_secret);
    await this.#persist();
  }

  /**
   * After `resume`: submits the results kept for `pending` calls, decides the calls whose handler was
   * running when the application stopped (`onInterrupted`; by default a fixed error, never run again),
   * answers the calls that never reached the application, and settles the kept calls no longer pending.
   */
  async deliverRecovered(pending: readonly PendingCall[]): Promise<void> {
    const open = new Map(pending.map((call) => [call.call_id, call]));
    for (const kept of [...this.#keeping.calls.values()]) {
      if (open.get(kept.call_id)?.status === 'pending') {
        this.#delivery.retainKept(kept, kept.outcome ?? (await this.#decideInterrupted(kept)));
        void this.#delivery.submit(kept.call_id);
      } else if (kept.operations.length > 0) {
        // No longer pending: one of its submissions may have been accepted.
        this.#delivery.retainKept(kept, kept.outcome ?? interruptedOutcome());
        void this.#delivery.reconcile(kept.call_id);
      } else this.#delivery.settle(kept.call_id, 'not_accepted');
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
    await this.#keeping.clear();
    this.#states.wake();
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
    this.#states.set(payload.call_id, 'running');
    void this.#execute(frame.session_id!, payload);
  }

  #cancelled(frame: EventFrame): void {
    const payload = frame.payload as unknown as ToolCancelPayload;
    this.#running.get(payload.call_id)?.abort(payload.reason);
  }

  async #execute(sessionId: string, payload: ToolCallPayload): Promise<void> {
    const kept = keptCall(sessionId, payload);
    this.#keeping.calls.set(payload.call_id, kept);
    // Kept before the handler runs: a restarted application knows the call may have run.
    await this.#persist();
    this.#delivery.retainKept(kept, await this.#run(kept));
    // Kept before it is submitted: a restarted application delivers it instead of deciding again.
    await this.#persist();
    await this.#delivery.submit(payload.call_id);
  }

  #run(kept: KeptCall): Promise<ToolOutcome> {
    return runHandler(this.#handlers, kept, this.#running);
  }

  #decideInterrupted(kept: KeptCall): Promise<ToolOutcome> {
    return decideInterrupted(this.#onInterrupted, kept, () => {
      this.#states.set(kept.call_id, 'running');
      return this.#run(kept);
    });
  }

  /** Drops a call from the store once nothing more can happen to it. */
  #forget(callId: string): void {
    if (this.#keeping.calls.delete(callId)) void this.#persist();
  }

  #recover(): void {
    if (this.#closed || this.#recovering !== null) return;
    const attaching = reattach({
      closed: () => this.#closed,
      reconnect: this.#reconnect,
      listen: (client) => this.#listen(client),
      resume: (client) => this.#proof.resumeOn(client, this.#id),
      lost: () => this.#becomeLost(),
      attached: (client, resumed) => {
        this.#client = client;
        this.#ownsConnection = true;
        this.#generation = resumed.executor_generation;
        if (client.closed) return;
        void this.#persist();
        this.emit('resumed', this.#generation);
      },
      daemonStopped: () => this.emit('daemon_stopped'),
      delay: () => this.#delay(),
    });
    this.#recovering = attaching.then((pending) => {
      this.#recovering = null;
      if (pending !== null) this.#afterResume(pending);
    });
  }

  async #becomeLost(): Promise<void> {
    this.#lost = new ExecutorLostError();
    for (const callId of this.#delivery.callIds()) this.#delivery.settle(callId, 'not_accepted');
    await this.#keeping.clear();
    this.emit('lost', this.#lost);
  }

  #afterResume(pending: readonly PendingCall[]): void {
    const open = new Map(pending.map((call) => [call.call_id, call]));
    for (const callId of this.#delivery.callIds()) {
      if (open.get(callId)?.status === 'pending') void this.#delivery.submit(callId);
      else void this.#delivery.reconcile(callId);
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
      this.#delivery.retain(call.call_id, {
        sessionId: call.session_id,
        binding: call,
        outcome: { status: 'error', code: 'execution_failed', message: NEVER_RECEIVED },
        operations: [],
        inFlight: false,
        refused: false,
      });
      void this.#delivery.submit(call.call_id);
    }
  }

  /** Writes the executor's record to the store, after any write still in progress. */
  #persist(): Promise<void> {
    if (this.#closed || this.#lost !== null) return this.#keeping.saving;
    return this.#keeping.write({
      executor_id: this.#id,
      executor_generation: this.#generation,
      resume_secret: this.#proof.secret,
      candidate_secret: this.#proof.candidate,
    });
  }

  #delay(): Promise<void> {
    return new Promise((resolve) => {
      // A plain timer holds the process open while retained results wait to be delivered.
      if (this.#clock === null) setTimeout(resolve, this.#retryDelayMs);
      else this.#clock.setTimeout(resolve, this.#retryDelayMs);
    });
  }
}
