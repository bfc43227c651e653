import type { Clock } from '../clock.js';
import { ERROR_MESSAGES } from '../errors.js';
import type { HistoryStore } from '../history/history-store.js';
import { TURN_LIMITS } from '../limits.js';
import type { ConversationMessage } from '../provider/chat-provider.js';
import type { ActiveTurn } from './active-turn.js';
import type { ApplicationCall, CallOutcome } from './application-call.js';

/** The durable record kinds of a turn, as `session.replay` shows them. */
export const TURN_RECORDS = {
  user: 'turn.user',
  call: 'turn.call',
  result: 'turn.call_result',
  terminal: 'turn.terminal',
} as const;

/**
 * A turn's durable history: the user record (prompt and manifest) with the turn marked active, each call's
 * binding before it is dispatched, each accepted result before the provider continues, and the terminal
 * that clears the mark. Arguments, schemas, instructions, paths, proofs and secrets are never written.
 */
export class TurnHistory {
  readonly #store: HistoryStore;
  readonly #clock: Clock;

  constructor(store: HistoryStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  started(turn: ActiveTurn): void {
    this.#store.beginTurn(turn.sessionId, turn.turnId, {
      kind: TURN_RECORDS.user,
      created_at: this.#clock.wallNow(),
      data: {
        turn_id: turn.turnId,
        operation_id: turn.operationId,
        prompt: turn.prompt,
        ...(turn.manifest ? { application_manifest: turn.manifest } : {}),
      },
    });
  }

  binding(turn: ActiveTurn, call: ApplicationCall): void {
    const { identity } = call;
    this.#store.appendRecord(turn.sessionId, {
      kind: TURN_RECORDS.call,
      created_at: this.#clock.wallNow(),
      data: {
        turn_id: turn.turnId,
        call_id: identity.callId,
        provider_call_id: identity.providerCallId,
        name: identity.tool.name,
        resource_id: identity.tool.resource_id,
        revision_id: identity.tool.revision_id,
        revision_sha256: identity.tool.revision_sha256,
        executor_id: identity.executor.executor_id,
        executor_generation: identity.executor.executor_generation,
      },
    });
  }

  result(turn: ActiveTurn, call: ApplicationCall, outcome: CallOutcome): void {
    this.#store.appendRecord(turn.sessionId, {
      kind: TURN_RECORDS.result,
      created_at: this.#clock.wallNow(),
      data: { turn_id: turn.turnId, call_id: call.identity.callId, outcome },
    });
  }

  terminal(turn: ActiveTurn, payload: Record<string, unknown>): void {
    const calls = [...turn.calls.values()].map((call) => ({
      call_id: call.identity.callId,
      status: call.status,
      external_effects: call.effects,
    }));
    this.#store.endTurn(turn.sessionId, turn.turnId, {
      kind: TURN_RECORDS.terminal,
      created_at: this.#clock.wallNow(),
      data: { ...payload, calls },
    });
  }

  /**
   * The session's earlier turns as conversation: each completed turn's prompt and answer, the most recent
   * ones within TURN_LIMITS.context_turns, oldest first.
   */
  context(sessionId: string, exceptTurnId: string): ConversationMessage[] {
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
      exchanges.push([
        { role: 'user', content: prompt },
        { role: 'assistant', content: data.assistant_text, toolCalls: [] },
      ]);
    }
    return exchanges.slice(-TURN_LIMITS.context_turns).flat();
  }
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
      .map((record) => String(record.data.call_id));
    const reported = new Map(
      store
        .recordsOfKind(row.session_id, row.started_sequence, TURN_RECORDS.result)
        .filter((record) => record.data.turn_id === row.turn_id)
        .map((record) => [String(record.data.call_id), (record.data.outcome as CallOutcome).status] as const),
    );
    store.endTurn(row.session_id, row.turn_id, {
      kind: TURN_RECORDS.terminal,
      created_at: clock.wallNow(),
      data: {
        turn_id: row.turn_id,
        status: 'failed',
        error: { code: 'interrupted', message: ERROR_MESSAGES.interrupted },
        assistant_text: '',
        activity_dropped: 0,
        calls: bound.map((callId) => {
          const outcome = reported.get(callId);
          return {
            call_id: callId,
            status: outcome === 'success' ? 'succeeded' : 'failed',
            external_effects: outcome ? 'reported' : 'uncertain',
          };
        }),
      },
    });
  }
  return active.length;
}
