import type { Clock } from '../clock.js';
import type { ExecutorRegistry } from '../executors/executor-registry.js';
import type { PendingCall } from '../executors/executor-types.js';
import { sha256Hex } from '../hashing.js';
import { newId } from '../ids.js';
import { PROFILE_LIMITS } from '../limits.js';
import type { ToolCall } from '../provider/chat-provider.js';
import { validateAgainstSchema } from '../resources/tool-contract.js';
import type { ActiveTurn } from './active-turn.js';
import { ApplicationCall, bindingMembers, type CallOutcome } from './application-call.js';
import type { EvidenceStore } from './evidence-store.js';
import { MODEL_CALL_REFUSALS, readModelCall } from './model-call.js';
import type { TurnSink } from './turn-events.js';
import { TurnEnding } from './turn-failure.js';
import type { TurnHistory } from './turn-history.js';

export interface CallDispatcherOptions {
  clock: Clock;
  executors: ExecutorRegistry;
  sink: TurnSink;
  history: TurnHistory;
  evidence: EvidenceStore;
  activity: (turn: ActiveTurn, activity: Record<string, unknown>) => void;
  /** Ends the turn when a call's deadline passes. */
  fail: (turn: ActiveTurn, ending: TurnEnding) => void;
}

/** A model call the daemon answered itself, without dispatch: its text goes back to the model as an error. */
export interface RefusedCall {
  providerCallId: string;
  content: string;
}

/** Why a call was answered without dispatch; the model reads these codes. */
const REFUSED = {
  ...MODEL_CALL_REFUSALS,
  call_limit: 'the daemon cannot take more application calls now',
  evidence_limit: 'the turn cannot record the evidence of more calls',
} as const;

/**
 * Application calls of every active turn: admission (the tool, the call id, the arguments against the
 * accepted input schema, the daemon's call capacity), the durable binding, dispatch exactly once to the
 * executor's attached connection, the availability and execution deadlines, and cancellation. Nothing
 * here ever dispatches a call twice: a reconnect lists pending calls, it never sends them again.
 */
export class CallDispatcher {
  readonly #options: CallDispatcherOptions;
  /** Calls of active turns, settled ones included: what counts against PROFILE_LIMITS.calls. */
  #retained = 0;

  constructor(options: CallDispatcherOptions) {
    this.#options = options;
  }

  /**
   * The calls one model round asked for: each is admitted, or refused with a text for the model. The
   * admitted calls' bindings are made durable together, then the calls are dispatched (parallel calls
   * run together), unless the turn ended meanwhile.
   */
  async admitRound(
    turn: ActiveTurn,
    toolCalls: readonly ToolCall[],
  ): Promise<{ calls: ApplicationCall[]; refused: RefusedCall[] }> {
    const calls: ApplicationCall[] = [];
    const refused: RefusedCall[] = [];
    for (const toolCall of toolCalls) {
      const admitted = this.#admit(turn, toolCall);
      if (typeof admitted === 'string') {
        refused.push({ providerCallId: toolCall.id, content: toolErrorText(admitted, REFUSED[admitted]) });
        continue;
      }
      calls.push(admitted);
    }
    await Promise.all(calls.map((call) => this.#options.history.binding(turn, call)));
    for (const call of calls) call.markBound();
    if (!turn.ending) for (const call of calls) this.#dispatch(turn, call);
    return { calls, refused };
  }

  /** Resolves when every call has settled, or when the turn ends first. */
  async settle(turn: ActiveTurn, calls: readonly ApplicationCall[]): Promise<void> {
    await Promise.race([Promise.all(calls.map((call) => call.settled)), turn.stopped]);
  }

  /** Dispatches the calls of `turn` that wait for `executorId`, now that it is attached again. */
  dispatchWaiting(turn: ActiveTurn, executorId: string): void {
    if (turn.ending) return;
    for (const call of turn.calls.values()) {
      if (
        call.bound &&
        call.status === 'waiting_for_executor' &&
        call.identity.executor.executor_id === executorId
      ) {
        this.#dispatch(turn, call);
      }
    }
  }

  pendingFor(executorId: string, turns: Iterable<ActiveTurn>): PendingCall[] {
    const pending: PendingCall[] = [];
    for (const turn of turns) {
      for (const call of turn.calls.values()) {
        const { identity } = call;
        if (!call.bound || !call.open || call.reporting || identity.executor.executor_id !== executorId) {
          continue;
        }
        pending.push({
          session_id: identity.sessionId,
          ...bindingMembers(identity),
          status: call.status as PendingCall['status'],
          wait_kind: call.waitKind ?? 'availability',
          remaining_ms: call.remainingMs(this.#options.clock) ?? 0,
        });
      }
    }
    return pending;
  }

  /** Settles once every result the turn's executor had sent when it ended is reported or lost. */
  async reportsInFlight(turn: ActiveTurn): Promise<void> {
    await Promise.all([...turn.calls.values()].map((call) => call.reporting));
  }

  /**
   * The turn is over: every open call ends with it. A dispatched call's executor is told (an advisory
   * cancel event, never a rollback); its effects stay uncertain. A call whose result is being recorded
   * ends with that result instead (see `reportsInFlight`). The turn's calls stop counting.
   */
  endTurn(turn: ActiveTurn, ending: TurnEnding): void {
    const reason = ending.code === 'tool_timeout' ? 'tool_timeout' : 'cancelled';
    for (const call of turn.calls.values()) {
      if (!call.open || call.reporting) continue;
      if (call.status === 'pending') this.#cancelEvent(turn, call, reason);
      call.fail(
        ending.code === 'tool_timeout' || ending.code === 'executor_unavailable' ? ending.code : 'cancelled',
      );
    }
    this.#retained -= turn.calls.size;
  }

  #admit(turn: ActiveTurn, toolCall: ToolCall): ApplicationCall | keyof typeof REFUSED {
    const manifest = turn.manifest;
    const tool = manifest?.tools.find((candidate) => candidate.name === toolCall.name);
    const revision = turn.pin?.snapshot.tools.find((candidate) => candidate.name === toolCall.name);
    const contract = revision?.contract;
    if (!manifest?.accepted_executor || !tool || !contract) return 'unknown_tool';
    // Application calls belong to the turn's own loop: subagents are never given application tools.
    const usedIds = turn.providerCallIds(null);
    const read = readModelCall(usedIds, toolCall);
    if (typeof read === 'string') return read;
    const parsed = read.arguments;
    if (!validateAgainstSchema(contract.input_schema, parsed)) return 'invalid_arguments';
    if (this.#retained >= PROFILE_LIMITS.calls || turn.calls.size >= PROFILE_LIMITS.calls_per_turn) {
      return 'call_limit';
    }
    const call = new ApplicationCall({
      turnId: turn.turnId,
      sessionId: turn.sessionId,
      callId: newId('call'),
      providerCallId: toolCall.id,
      tool,
      contract,
      executor: manifest.accepted_executor,
      arguments: JSON.stringify(parsed),
    });
    if (!this.#options.evidence.reserveCall(turn.turnId, call)) return 'evidence_limit';
    usedIds.add(toolCall.id);
    turn.calls.set(call.identity.callId, call);
    this.#retained += 1;
    return call;
  }

  #dispatch(turn: ActiveTurn, call: ApplicationCall): void {
    const { clock, executors, sink } = this.#options;
    const { identity } = call;
    const attachment = executors.attachmentOf(identity.executor.executor_id);
    const sent =
      attachment !== null &&
      sink.toExecutor(attachment.connection_id, {
        event: 'turn.application_tool_call',
        sessionId: turn.sessionId,
        payload: {
          ...bindingMembers(identity),
          executor_id: identity.executor.executor_id,
          executor_generation: attachment.executor_generation,
          arguments: JSON.parse(identity.arguments) as Record<string, unknown>,
          timeout_ms: identity.tool.timeout_ms,
        },
      });
    if (sent) {
      call.dispatched(clock, () => this.#options.fail(turn, new TurnEnding('failed', 'tool_timeout')));
    } else {
      call.awaitExecutor(clock, PROFILE_LIMITS.executor_availability_timeout_ms, () =>
        this.#options.fail(turn, new TurnEnding('failed', 'executor_unavailable')),
      );
    }
    this.#options.activity(turn, { kind: 'tool_call', call: hashedId(identity.callId), status: call.status });
  }

  #cancelEvent(turn: ActiveTurn, call: ApplicationCall, reason: 'cancelled' | 'tool_timeout'): void {
    const attachment = this.#options.executors.attachmentOf(call.identity.executor.executor_id);
    if (!attachment) return;
    this.#options.sink.toExecutor(attachment.connection_id, {
      event: 'turn.application_tool_cancel',
      sessionId: turn.sessionId,
      payload: { turn_id: turn.turnId, call_id: call.identity.callId, reason },
    });
  }
}

/** The text a tool message carries for the model: the value, or the error marked as an error. */
export function outcomeText(outcome: CallOutcome): string {
  return outcome.status === 'success'
    ? JSON.stringify(outcome.value)
    : toolErrorText(outcome.code, outcome.message);
}

/** A tool message that tells the model a call failed: `{"error":{code, message}}`. */
export function toolErrorText(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** Activity names calls by a hash of their id, never by arguments, results or labels. */
export function hashedId(id: string): string {
  return sha256Hex(id).slice(0, 16);
}
