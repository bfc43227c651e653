import { PROVIDER_REASONING_SUMMARY } from '../capabilities/describe.js';
import { WireError } from '../errors.js';
import type { PendingCall } from '../executors/executor-types.js';
import { newId } from '../ids.js';
import { OPERATION_RETENTION_MS } from '../limits.js';
import type { ChatProvider, ModelSelection } from '../provider/chat-provider.js';
import type { ReasoningSummary } from '../provider/reasoning-summaries.js';
import { ActiveTurn } from './active-turn.js';
import { CallDispatcher, hashedId } from './call-dispatcher.js';
import { ClaimSnapshots, type ClaimSnapshotView, EMPTY_SNAPSHOT } from './claim-snapshots.js';
import { DaemonRounds } from './daemon-rounds.js';
import { summaryActivity } from './summary-activity.js';
import { type ToolResultPayload, validateToolResult } from './tool-result.js';
import { admitApplication } from './turn-admission.js';
import type { TurnEvent } from './turn-events.js';
import { daemonFailure, TurnEnding } from './turn-failure.js';
import { interruptedTerminal, recoverInterruptedTurns, TurnHistory } from './turn-history.js';
import type { TurnAcceptance, TurnCoordinatorOptions, TurnStart } from './turn-requests.js';
import { runTurn } from './turn-worker.js';

interface RetainedTerminal {
  payload: (selected: boolean) => Record<string, unknown>;
  at: number;
}

/**
 * The turn lifecycle of a daemon: admission ("accept the complete snapshot"), one worker per turn, the
 * live event sequence (acceptance, `turn.started` at 0, deltas and activity, exactly one terminal),
 * stop and close, the durable history of every turn, and the last terminal of each session for claim
 * snapshots. A turn outlives its controller's connection; its events go to whoever controls the session.
 */
export class TurnCoordinator {
  readonly #options: TurnCoordinatorOptions;
  readonly #history: TurnHistory;
  readonly #calls: CallDispatcher;
  readonly #daemonTools: DaemonRounds;
  readonly #active = new Map<string, ActiveTurn>();
  readonly #byId = new Map<string, ActiveTurn>();
  readonly #terminals = new Map<string, RetainedTerminal>();
  readonly #snapshots = new ClaimSnapshots();
  readonly #workers = new Set<Promise<void>>();
  #closed = false;

  constructor(options: TurnCoordinatorOptions) {
    this.#options = options;
    this.#history = new TurnHistory(options.history, options.clock);
    this.#calls = new CallDispatcher({
      clock: options.clock,
      executors: options.executors,
      sink: options.sink,
      history: this.#history,
      evidence: options.evidence,
      activity: (turn, activity) => this.#activity(turn, activity),
      fail: (turn, ending) => turn.end(ending),
    });
    this.#daemonTools = new DaemonRounds({
      history: this.#history,
      toolbox: options.toolbox,
      activity: (turn, activity) => this.#activity(turn, activity),
    });
  }

  /** Records every turn a stopped daemon left active as failed with `interrupted`; at startup, once. */
  recover(): number {
    return recoverInterruptedTurns(this.#options.history, this.#options.clock);
  }

  get activeCount(): number {
    return this.#active.size;
  }

  isActive(sessionId: string): boolean {
    return this.#active.has(sessionId);
  }

  /** The sessions with a turn running now. */
  activeSessionIds(): string[] {
    return [...this.#active.keys()];
  }

  /**
   * `turn.start` admission, synchronous from the first check until the turn holds its session, its
   * registry snapshot and its executor, so nothing can change them in between; then the durable user
   * record. Resolves with the acceptance and `begin`, which starts the worker; call it once the acceptance
   * has been written.
   */
  async start(request: TurnStart): Promise<{ acceptance: TurnAcceptance; begin: () => void }> {
    if (this.#closed) throw new WireError('shutting_down');
    const provider = this.#options.provider;
    const { selection } = request;
    if (!provider || !selection) throw new WireError('provider_unavailable');
    if (this.#active.has(request.sessionId)) throw new WireError('session_busy');
    const evidence = request.selected ? this.#options.evidence.reserve() : null;
    let admitted: ReturnType<typeof admitApplication>;
    try {
      admitted = admitApplication(
        {
          sessionId: request.sessionId,
          connectionId: request.connectionId,
          selected: request.selected,
          application: request.application,
          controller: request.controller,
        },
        this.#options.registry,
        this.#options.executors,
      );
    } catch (error) {
      evidence?.release();
      throw error;
    }
    const { manifest, pin } = admitted;
    const turn = new ActiveTurn({
      turnId: newId('turn'),
      sessionId: request.sessionId,
      operationId: request.operationId,
      prompt: request.prompt,
      workspace: request.workspace,
      builtins: this.#options.toolbox.offered,
      mcpTools: this.#options.toolbox.mcpTools(),
      manifest,
      pin,
      selected: request.selected,
    });
    const releases = [
      this.#options.registry.protect(turn.sessionId),
      this.#options.holdIdle(),
      ...(manifest?.accepted_executor ? [this.#pinExecutor(manifest.accepted_executor.executor_id)] : []),
      () => pin?.release(),
    ];
    this.#active.set(turn.sessionId, turn);
    this.#byId.set(turn.turnId, turn);
    try {
      await this.#history.started(turn);
    } catch (error) {
      this.#active.delete(turn.sessionId);
      this.#byId.delete(turn.turnId);
      evidence?.release();
      for (const release of releases) release();
      throw error;
    }
    evidence?.fill(turn);
    const acceptance: TurnAcceptance = {
      turn_id: turn.turnId,
      status: 'accepted',
      ...(request.selected ? { application_manifest: manifest } : {}),
    };
    // The ledger keeps the profile's view; `operation.lookup` removes the manifest for ordinary readers.
    this.#options.operations.accept(turn.operationId, { ...acceptance, application_manifest: manifest });
    const begin = () => {
      const worker = this.#work(turn, provider, selection, releases);
      this.#workers.add(worker);
      void worker.finally(() => this.#workers.delete(worker));
    };
    return { acceptance, begin };
  }

  /** `turn.stop`: cancels the session's active turn; its terminal follows as an event. */
  stop(sessionId: string, turnId: string): { turn_id: string; status: 'cancelling' } {
    const turn = this.#active.get(sessionId);
    if (!turn || turn.turnId !== turnId || turn.ending) throw new WireError('unknown_turn');
    turn.end(new TurnEnding('cancelled'));
    return { turn_id: turnId, status: 'cancelling' };
  }

  /** `session.close` of a session with an active turn cancels it; returns whether there was one. */
  cancelForClose(sessionId: string): boolean {
    const turn = this.#active.get(sessionId);
    if (!turn) return false;
    turn.end(new TurnEnding('cancelled'));
    return true;
  }

  /** The client went away for good (stdio's end of input): every active turn ends `cancelled`, recorded. */
  async cancelAll(): Promise<void> {
    for (const turn of this.#active.values()) turn.end(new TurnEnding('cancelled'));
    await Promise.allSettled([...this.#workers]);
  }

  /**
   * `turn.application_tool_result` from the executor's connection: acknowledged once the result is
   * durable, and only then handed to the turn, so the provider never continues from a result a crash
   * could lose. Once admitted, the result is the call's ending whatever ends the turn meanwhile (a stop, a
   * close, another call's deadline): the turn's terminal waits for it.
   */
  async submitResult(
    connectionId: string,
    sessionId: string,
    payload: ToolResultPayload,
  ): Promise<{ call_id: string; status: 'accepted' }> {
    const turn = this.#byId.get(payload.turn_id);
    const call = turn && turn.sessionId === sessionId ? turn.calls.get(payload.call_id) : undefined;
    if (!turn || !call || call.status !== 'pending' || call.reporting || turn.ending) {
      throw new WireError('unknown_turn');
    }
    if (!this.#options.executors.isCurrent(payload.executor_id, payload.executor_generation, connectionId)) {
      throw new WireError('stale_connection');
    }
    const outcome = validateToolResult(call, payload);
    const reporting = this.#history.result(turn, call, outcome).then(
      () => call.report(outcome),
      (error: unknown) => {
        call.resultLost();
        turn.end(daemonFailure(error));
        throw error;
      },
    );
    call.resultAdmitted(reporting);
    await reporting;
    this.#activity(turn, { kind: 'tool_call', call: hashedId(call.identity.callId), status: call.status });
    return { call_id: call.identity.callId, status: 'accepted' };
  }

  /** The calls still waiting on `executorId`, for the `pending_calls` of its confirm or resume. */
  pendingCalls(executorId: string): PendingCall[] {
    return this.#calls.pendingFor(executorId, this.#byId.values());
  }

  /** An executor was (re)attached: calls waiting for it are dispatched to its connection now. */
  executorAttached(executorId: string): void {
    for (const turn of this.#byId.values()) this.#calls.dispatchWaiting(turn, executorId);
  }

  /**
   * The claim snapshot of `sessionId`: its active turn, or else its last terminal of the last 600 s. An
   * active turn supersedes the terminal before it (which its client saw before starting it), so a snapshot
   * carries at most one assistant text and one manifest and stays within 24 KiB. While it is unchanged, the
   * same object is answered, so the claims that retain it can share its encoding.
   */
  snapshot(sessionId: string, selected: boolean): ClaimSnapshotView {
    const turn = this.#active.get(sessionId);
    const terminal = this.#terminals.get(sessionId);
    const retained = !turn && terminal && this.#options.clock.now() - terminal.at < OPERATION_RETENTION_MS;
    if (terminal && !turn && !retained) this.#terminals.delete(sessionId);
    if (turn) {
      // Its text only grows, and every delta or activity takes a sequence number.
      const version = `${turn.sequence}:${turn.assistantText.length}`;
      return this.#snapshots.view(turn, version, selected, () => ({
        turn: {
          turn_id: turn.turnId,
          status: 'running',
          sequence: turn.sequence,
          assistant_text: turn.assistantText,
          ...(selected ? { application_manifest: turn.manifest } : {}),
        },
        terminal: null,
      }));
    }
    if (!retained) return EMPTY_SNAPSHOT;
    return this.#snapshots.view(terminal, '', selected, () => ({
      turn: null,
      terminal: terminal.payload(selected),
    }));
  }

  /**
   * Shutdown: every active turn ends `interrupted`, as after a crash, but here its worker still records
   * the terminal before the store closes.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const turn of this.#active.values()) turn.end(new TurnEnding('failed', 'interrupted'));
    await Promise.allSettled([...this.#workers]);
  }

  async #work(
    turn: ActiveTurn,
    provider: ChatProvider,
    selection: ModelSelection,
    releases: Array<() => void>,
  ): Promise<void> {
    this.#emit(turn, 'turn.started', () => ({ turn_id: turn.turnId }), false);
    let ending: TurnEnding;
    let first = false;
    try {
      const context = this.#history.context(turn.sessionId, turn.turnId);
      first = context.length === 0;
      const { toolbox, instructions } = this.#options;
      const workspace = await toolbox.workspaceInstructions(
        turn.workspace,
        turn.abort.signal,
        turn.sessionId,
      );
      ending = await runTurn({
        turn,
        provider,
        selection,
        context,
        text: (delta) =>
          this.#emit(turn, 'turn.assistant_delta', () => ({ turn_id: turn.turnId, delta }), false),
        activity: (activity) => this.#activity(turn, activity),
        summary: (summary) => this.#summary(turn, summary),
        calls: this.#calls,
        daemonTools: this.#daemonTools,
        toolbox,
        instructions: [instructions.home, workspace ?? '', instructions.skillIndex],
      });
    } catch (error) {
      ending = daemonFailure(error);
    }
    turn.end(ending);
    await this.#calls.reportsInFlight(turn);
    this.#calls.endTurn(turn, ending);
    const final = turn.ending ?? ending;
    const recorded = await this.#finish(turn, final, releases);
    if (recorded && first && final.status === 'completed') {
      this.#options.firstTurnCompleted?.(turn.sessionId, turn.prompt, turn.assistantText, selection);
    }
  }

  /**
   * The terminal: durable first, then the operation settles and the event goes out, so nobody sees a
   * terminal that a crash could turn into `interrupted`. When the terminal cannot be recorded (a full
   * disk), the turn ends as the next start will record it, `interrupted` without its answer, and that is
   * what its client is told; recording that is tried at once too. Resolves with whether the turn's own
   * terminal was recorded.
   */
  async #finish(turn: ActiveTurn, ending: TurnEnding, releases: Array<() => void>): Promise<boolean> {
    const withManifest = (base: Record<string, unknown>) => (receiverSelected: boolean) =>
      receiverSelected ? { ...base, application_manifest: turn.manifest } : { ...base };
    let payload = withManifest({
      turn_id: turn.turnId,
      status: ending.status,
      error: ending.error,
      assistant_text: turn.assistantText,
      activity_dropped: turn.activityDropped,
    });
    let recorded = false;
    try {
      await this.#history.terminal(turn, payload(turn.manifest !== null));
      recorded = true;
    } catch {
      payload = withManifest(interruptedTerminal(turn.turnId, turn.activityDropped));
      // If this fails too, the turn's active mark stays and the next start records the same ending.
      await this.#history.terminal(turn, payload(turn.manifest !== null)).catch(() => {});
    } finally {
      this.#options.operations.settle(turn.operationId, { ok: true, result: payload(true) });
      this.#active.delete(turn.sessionId);
      this.#byId.delete(turn.turnId);
      this.#options.evidence.settled(turn.turnId);
      this.#terminals.set(turn.sessionId, { payload, at: this.#options.clock.now() });
      this.#emit(turn, 'turn.terminal', payload, false);
      for (const release of releases) release();
    }
    return recorded;
  }

  #activity(turn: ActiveTurn, activity: Record<string, unknown>): void {
    if (turn.ending) return;
    const sent = this.#emit(turn, 'turn.activity', () => ({ turn_id: turn.turnId, activity }), true);
    if (!sent) turn.countDroppedActivity();
  }

  /**
   * A reasoning summary is produced only for a controller that negotiated `provider_reasoning_summary`:
   * for any other receiver, or none, it does not exist (no sequence number, not counted as dropped).
   */
  #summary(turn: ActiveTurn, summary: ReasoningSummary): void {
    if (!this.#options.sink.controllerNegotiated(turn.sessionId, PROVIDER_REASONING_SUMMARY)) return;
    this.#activity(turn, summaryActivity(summary));
  }

  #emit(turn: ActiveTurn, event: TurnEvent['event'], payload: TurnEvent['payload'], lossy: boolean): boolean {
    const frame: TurnEvent = {
      event,
      sessionId: turn.sessionId,
      operationId: turn.operationId,
      sequence: turn.stamp(),
      payload,
    };
    return this.#options.sink.toController(frame, lossy);
  }

  #pinExecutor(executorId: string): () => void {
    this.#options.executors.pin(executorId);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#options.executors.unpin(executorId);
    };
  }
}
