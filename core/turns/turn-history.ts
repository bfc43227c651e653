import type { DaemonCall, ToolOutcome } from '../agent/daemon-call.js';
import type { Clock } from '../clock.js';
import { ERROR_MESSAGES } from '../errors.js';
import { type HistoryStore, recordPageBytes } from '../history/history-store.js';
import { SERVICE_LIMITS, TURN_LIMITS } from '../limits.js';
import type { ConversationMessage } from '../provider/chat-provider.js';
import type { ActiveTurn } from './active-turn.js';
import { type ApplicationCall, bindingMembers, type CallOutcome } from './application-call.js';
import { type TerminalCall, terminalData } from './terminal-record.js';

/** Sessions whose recent exchanges are kept in memory; others are read from the store when needed. */
const CACHED_SESSIONS = 64;

/** The durable record kinds of a turn, as `session.replay` shows them. */
export const TURN_RECORDS = {
  user: 'turn.user',
  call: 'turn.call',
  result: 'turn.call_result',
  terminal: 'turn.terminal',
} as const;

/**
 * The most bytes the data of a terminal record takes, encoded, so that the record replays whole, alone on
 * a page if need be. The payload takes at most TERMINAL_PAYLOAD_BYTES of it; the calls and the plan fill
 * what is left, at least the difference.
 */
export const TERMINAL_DATA_BYTES =
  SERVICE_LIMITS.replay_page_bytes - recordPageBytes(TURN_RECORDS.terminal, 0);

/**
 * A turn's durable history: the user record (prompt and manifest) with the turn marked active, each call's
 * binding before it is dispatched, each accepted result before the provider continues, and the terminal
 * that clears the mark. Each write resolves once it is durable, committed together with the other turns'
 * writes of the moment. Arguments, schemas, instructions, paths, proofs and secrets are never written.
 */
export class TurnHistory {
  readonly #store: HistoryStore;
  readonly #clock: Clock;
  /**
   * The recent exchanges of the sessions that ran turns lately, so a turn does not read its session's
   * history again; kept in step by `terminal`, read from the store after a restart or when forgotten.
   */
  readonly #exchanges = new Map<string, ConversationMessage[][]>();

  constructor(store: HistoryStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  started(turn: ActiveTurn): Promise<unknown> {
    const record = {
      kind: TURN_RECORDS.user,
      created_at: this.#clock.wallNow(),
      data: {
        turn_id: turn.turnId,
        operation_id: turn.operationId,
        prompt: turn.prompt,
        ...(turn.manifest ? { application_manifest: turn.manifest } : {}),
      },
    };
    return this.#store.writer.beginTurn(turn.sessionId, turn.turnId, record);
  }

  binding(turn: ActiveTurn, call: ApplicationCall): Promise<unknown> {
    const { identity } = call;
    return this.#append(turn, TURN_RECORDS.call, {
      ...bindingMembers(identity),
      executor_id: identity.executor.executor_id,
      executor_generation: identity.executor.executor_generation,
    });
  }

  /** A built-in or MCP call's binding: its tool, never its arguments. */
  daemonBinding(turn: ActiveTurn, call: DaemonCall): Promise<unknown> {
    return this.#append(turn, TURN_RECORDS.call, {
      turn_id: turn.turnId,
      call_id: call.callId,
      provider_call_id: call.providerCallId,
      name: call.name,
      [call.kind]: true,
      ...(call.parentCallId ? { parent_call_id: call.parentCallId } : {}),
    });
  }

  /**
   * A built-in or MCP call's outcome: success, or the error's code and message. Its output is not written:
   * it holds workspace contents, command output, a fetched page or a server's answer, and only the model
   * reads it.
   */
  daemonResult(turn: ActiveTurn, call: DaemonCall, outcome: ToolOutcome): Promise<unknown> {
    return this.#append(turn, TURN_RECORDS.result, {
      turn_id: turn.turnId,
      call_id: call.callId,
      outcome: outcome.ok
        ? { status: 'success' }
        : { status: 'error', code: outcome.code, message: outcome.message },
    });
  }

  result(turn: ActiveTurn, call: ApplicationCall, outcome: CallOutcome): Promise<unknown> {
    return this.#append(turn, TURN_RECORDS.result, {
      turn_id: turn.turnId,
      call_id: call.identity.callId,
      outcome,
    });
  }

  /**
   * The terminal record: `payload` as the live terminal carries it, with the turn's calls and plan as far
   * as they fit TERMINAL_DATA_BYTES (`terminalData` says what is left out first).
   */
  async terminal(turn: ActiveTurn, payload: Record<string, unknown>): Promise<void> {
    const calls: TerminalCall[] = [
      ...[...turn.calls.values()].map((call) => ({
        call_id: call.identity.callId,
        status: call.status,
        external_effects: call.effects,
      })),
      ...[...turn.daemonCalls.values()].map((call) => ({
        call_id: call.callId,
        tool: call.name,
        status: call.status,
        external_effects: call.effects,
      })),
    ];
    const record = {
      kind: TURN_RECORDS.terminal,
      created_at: this.#clock.wallNow(),
      data: terminalData(payload, calls, turn.plan, TERMINAL_DATA_BYTES),
    };
    await this.#store.writer.endTurn(turn.sessionId, turn.turnId, record);
    const cached = this.#exchanges.get(turn.sessionId);
    if (cached && payload.status === 'completed') {
      cached.push(exchange(turn.prompt, String(payload.assistant_text)));
      if (cached.length > TURN_LIMITS.context_turns) cached.shift();
    }
  }

  #append(turn: ActiveTurn, kind: string, data: Record<string, unknown>): Promise<unknown> {
    const record = { kind, created_at: this.#clock.wallNow(), data };
    return this.#store.writer.appendRecord(turn.sessionId, record);
  }

  /**
   * The session's earlier turns as conversation: each completed turn's prompt and answer, the most recent
   * ones within TURN_LIMITS.context_turns, oldest first.
   */
  context(sessionId: string, exceptTurnId: string): ConversationMessage[] {
    let exchanges = this.#exchanges.get(sessionId);
    if (exchanges) {
      // Most recently used last: the least recently used session is the one forgotten first.
      this.#exchanges.delete(sessionId);
    } else {
      exchanges = this.#load(sessionId, exceptTurnId);
    }
    this.#exchanges.set(sessionId, exchanges);
    if (this.#exchanges.size > CACHED_SESSIONS) {
      const oldest = this.#exchanges.keys().next().value;
      if (oldest !== undefined) this.#exchanges.delete(oldest);
    }
    return exchanges.flat();
  }

  /** The exchanges of the session's last completed turns, read from the store. */
  #load(sessionId: string, exceptTurnId: string): ConversationMessage[][] {
    // Each turn has one user record and at most one terminal, so the last few of each cover the exchanges
    // wanted; reading the whole history would grow with every turn of the session.
    const window = TURN_LIMITS.context_turns * 2;
    const prompts = new Map<string, string>();
    for (const record of this.#store.lastRecordsOfKind(sessionId, TURN_RECORDS.user, window + 1)) {
      const { turn_id: turnId, prompt } = record.data as { turn_id: string; prompt: string };
      if (turnId !== exceptTurnId) prompts.set(turnId, prompt);
    }
    const exchanges: ConversationMessage[][] = [];
    for (const record of this.#store.lastRecordsOfKind(sessionId, TURN_RECORDS.terminal, window)) {
      const data = record.data as { turn_id: string; status: string; assistant_text: string };
      const prompt = prompts.get(data.turn_id);
      if (data.status !== 'completed' || prompt === undefined) continue;
      exchanges.push(exchange(prompt, data.assistant_text));
    }
    return exchanges.slice(-TURN_LIMITS.context_turns);
  }
}

function exchange(prompt: string, answer: string): ConversationMessage[] {
  return [
    { role: 'user', content: prompt },
    { role: 'assistant', content: answer, toolCalls: [] },
  ];
}

/**
 * The terminal of a turn whose ending could not be recorded: what the next start records for it, and so
 * what its client is told when the daemon knows it at once (its terminal record failed to be written).
 * The answer is not kept, since nothing of it is durable; dropped activity is not known after a restart.
 */
export function interruptedTerminal(turnId: string, activityDropped: number) {
  return {
    turn_id: turnId,
    status: 'failed' as const,
    error: { code: 'interrupted' as const, message: ERROR_MESSAGES.interrupted },
    assistant_text: '',
    activity_dropped: activityDropped,
  };
}

/**
 * At startup: every turn whose start is recorded without a terminal was running when the daemon stopped.
 * Its terminal is recorded as failed with `interrupted`; calls already bound are reported `uncertain`,
 * since nobody knows whether their executor acted.
 */
export function recoverInterruptedTurns(store: HistoryStore, clock: Clock): number {
  const active = store.activeTurns();
  for (const row of active) {
    const bound = store
      .recordsOfKind(row.session_id, row.started_sequence, TURN_RECORDS.call)
      .filter((record) => record.data.turn_id === row.turn_id)
      .map((record) => ({
        callId: String(record.data.call_id),
        tool: record.data.builtin === true || record.data.mcp === true ? String(record.data.name) : null,
      }));
    const reported = new Map(
      store
        .recordsOfKind(row.session_id, row.started_sequence, TURN_RECORDS.result)
        .filter((record) => record.data.turn_id === row.turn_id)
        .map((record) => [String(record.data.call_id), (record.data.outcome as CallOutcome).status] as const),
    );
    const calls = bound.map(({ callId, tool }): TerminalCall => {
      const outcome = reported.get(callId);
      return {
        call_id: callId,
        ...(tool ? { tool } : {}),
        status: outcome === 'success' ? 'succeeded' : 'failed',
        external_effects: outcome ? 'reported' : 'uncertain',
      };
    });
    store.endTurn(row.session_id, row.turn_id, {
      kind: TURN_RECORDS.terminal,
      created_at: clock.wallNow(),
      data: terminalData(interruptedTerminal(row.turn_id, 0), calls, null, TERMINAL_DATA_BYTES),
    });
  }
  return active.length;
}
