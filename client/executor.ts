import type { Clock } from '../core/clock.js';
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
 * `not_accepted` when the call ended without it (a stop, a timeout, a turn that ended), `running`
 * while the handler runs and `retained` while the result waits for its acknowledgment.
 */
export type CallState = 'running' | 'retained' | 'accepted' | 'not_accepted';

export interface ExecutorOptions {
  /** Tool handlers by tool name. A call of a name without a handler is answered `execution_failed`. */
  handlers: Record<string, ToolHandler>;
  /** Opens a new connection, initialized with the profile: used after every drop. */
  reconnect: () => Promise<WireClient>;
  /** Wait between attempts to reconnect or to reconcile an outcome still in progress. */
  retryDelayMs?: number;
  /** The time retry waits are read from (default: Node's timers, which keep the process alive). */
  clock?: Clock;
}

/** Fixed texts: a handler's own error text never reaches the model unless it threw a ToolFailure. */
const HANDLER_FAILED = 'the tool failed';
const RESULT_REFUSED = 'the tool returned a value its output schema does not allow';
const NEVER_RECEIVED = 'the call was lost on its way to the application and was not run';
const NO_HANDLER = 'the application has no handler for this tool';

/** What a result must echo of its call. */
type Binding = Pick<ToolCallPayload, 'turn_id' | 'resource_id' | 'revision_id' | 'revision_sha256'>;

interface Retained {
  sessionId: string;
  binding: Binding;
  outcome: ToolOutcome;
  /** Every operation id a submission of this result used: one of them may have been accepted. */
  operations: string[];
  inFlight: boolean;
}

/**
 * The application side of tool calls, over the daemon's executor methods. It keeps the resume secret
 * in memory only, runs each dispatched call's handler exactly once, retains each result until the
 * daemon acknowledged it, and after a dropped connection resumes on a new one and submits the retained
 * results with the new generation, reconciling submissions whose answer was lost with `operation.lookup`.
 */
export class ApplicationExecutor {
  readonly #handlers: Record<string, ToolHandler>;
  readonly #reconnect: () => Promise<WireClient>;
  readonly #retryDelayMs: number;
  readonly #clock: Clock | null;
  readonly #id: string;
  #generation: number;
  #secret: string;
  /** A rotation's candidate secret, kept beside the current one until the rotation is known to be done. */
  #candidate: string | null = null;
  #client: WireClient;
  #recovering: Promise<void> | null = null;
  #closed = false;
  #lost: ExecutorLostError | null = null;
  readonly #states = new Map<string, CallState>();
  readonly #retained = new Map<string, Retained>();
  readonly #running = new Map<string, AbortController>();
  readonly #stateWaiters = new Set<() => void>();

  private constructor(client: WireClient, created: ExecutorCreateResult, options: ExecutorOptions) {
    this.#handlers = options.handlers;
    this.#reconnect = options.reconnect;
    this.#retryDelayMs = options.retryDelayMs ?? 250;
    this.#clock = options.clock ?? null;
    this.#id = created.executor_id;
    this.#generation = created.executor_generation;
    this.#secret = created.resume_secret;
    this.#client = client;
  }

  /** Creates an executor on `client` and confirms it at once, well within the daemon's 60 s window. */
  static async create(client: WireClient, options: ExecutorOptions): Promise<ApplicationExecutor> {
    const created = await typedCall<ExecutorCreateResult>(
      client,
      'executor.create',
      {},
      { operation: operationId() },
    );
    const executor = new ApplicationExecutor(client, created, options);
    executor.#listen(client);
    await typedCall<ExecutorAttach>(
      client,
      'executor.confirm',
      { executor_id: created.executor_id, resume_secret: created.resume_secret },
      { operation: operationId() },
    );
    return executor;
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

  /** Resolves once `callId` is settled (accepted or not_accepted). */
  async settled(callId: string): Promise<CallState> {
    for (;;) {
      const state = this.#states.get(callId);
      if (state === 'accepted' || state === 'not_accepted') return state;
      await new Promise<void>((resolve) => this.#stateWaiters.add(resolve));
    }
  }

  /**
   * Replaces the resume secret. The old secret stays the proof until the daemon confirmed the new
   * one; if the connection drops meanwhile, recovery tries the new secret first, then the old.
   */
  async rotate(): Promise<void> {
    const client = this.#client;
    const identity = { executor_id: this.#id, executor_generation: this.#generation };
    const rotated = await typedCall<ExecutorRotateResult>(client, 'executor.rotate', identity, {
      operation: operationId(),
    });
    this.#candidate = rotated.resume_secret;
    await typedCall(
      client,
      'executor.rotate_confirm',
      { ...identity, resume_secret: rotated.resume_secret },
      { operation: operationId() },
    );
    this.#promote(rotated.resume_secret);
  }

  /** Releases the executor (its proofs stop working) and closes its connection. */
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
    client.close();
    this.#wake();
  }

  #listen(client: WireClient): void {
    client.onEvent((frame) => {
      if (frame.payload.executor_id !== undefined && frame.payload.executor_id !== this.#id) return false;
      if (frame.event === 'turn.application_tool_call') this.#dispatched(frame);
      else if (frame.event === 'turn.application_tool_cancel') this.#cancelled(frame);
      else return false;
      return true;
    });
    client.onClose(() => {
      if (client === this.#client) this.#recover();
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
    const controller = new AbortController();
    this.#running.set(payload.call_id, controller);
    const outcome = await this.#run(sessionId, payload, controller.signal);
    this.#running.delete(payload.call_id);
    this.#retain(payload.call_id, { sessionId, binding: payload, outcome, operations: [], inFlight: false });
    await this.#submit(payload.call_id);
  }

  async #run(sessionId: string, payload: ToolCallPayload, signal: AbortSignal): Promise<ToolOutcome> {
    const handler = this.#handlers[payload.name];
    if (handler === undefined) return { status: 'error', code: 'execution_failed', message: NO_HANDLER };
    const call: ToolCall = {
      sessionId,
      turnId: payload.turn_id,
      callId: payload.call_id,
      name: payload.name,
      timeoutMs: payload.timeout_ms,
      signal,
    };
    try {
      return { status: 'success', value: await handler(payload.arguments, call) };
    } catch (error) {
      if (error instanceof ToolFailure) return { status: 'error', code: error.code, message: error.message };
      return { status: 'error', code: 'execution_failed', message: HANDLER_FAILED };
    }
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
    if (response.ok) return this.#settle(callId, 'accepted');
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
        if (lookup.status === 'completed') return this.#settle(callId, 'accepted');
        break;
      }
    }
    this.#settle(callId, 'not_accepted');
  }

  #settle(callId: string, state: 'accepted' | 'not_accepted'): void {
    this.#retained.delete(callId);
    this.#setState(callId, state);
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
    while (!this.#closed) {
      let client: WireClient | null = null;
      try {
        client = await this.#reconnect();
        this.#listen(client);
        const resumed = await this.#resume(client);
        if (resumed === null) {
          client.close();
          this.#lost = new ExecutorLostError();
          for (const callId of this.#retained.keys()) this.#settle(callId, 'not_accepted');
          return null;
        }
        this.#client = client;
        this.#generation = resumed.executor_generation;
        if (client.closed) continue;
        return resumed.pending_calls;
      } catch {
        client?.close();
        await this.#delay();
      }
    }
    return null;
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
    for (const call of pending) {
      if (call.status !== 'pending' || this.#states.has(call.call_id)) continue;
      // Dispatched to a connection that closed before the call reached us: the daemon never sends it
      // again and its arguments are not recoverable, so it is answered as failed without running it.
      this.#retain(call.call_id, {
        sessionId: call.session_id,
        binding: call,
        outcome: { status: 'error', code: 'execution_failed', message: NEVER_RECEIVED },
        operations: [],
        inFlight: false,
      });
      void this.#submit(call.call_id);
    }
  }

  #delay(): Promise<void> {
    return new Promise((resolve) => {
      // A plain timer holds the process open while retained results wait to be delivered.
      if (this.#clock === null) setTimeout(resolve, this.#retryDelayMs);
      else this.#clock.setTimeout(resolve, this.#retryDelayMs);
    });
  }
}
