import type { KeptTurn } from './executor-store.js';
import { typedCall } from './typed-call.js';
import { WireCallError, type WireClient } from './wire-client.js';
import type { ReplayResult, TerminalPayload } from './wire-types.js';

/** The most records a `session.replay` page holds (docs/protocol.md section 8). */
const PAGE_RECORDS = 100;

/** What a session's durable history says of some of its turns. */
export interface TurnsInHistory {
  /** The turns whose acceptance (`turn.user`) it holds. */
  started: Set<string>;
  /** Their terminals, by turn id, as a profile connection receives them live. */
  terminals: Map<string, TerminalPayload>;
}

/** A kept turn, and its terminal as the session's durable history held it. */
export interface TurnReport extends KeptTurn {
  /**
   * Its terminal when it had ended (`interrupted` when the daemon stopped while it ran); null while it
   * runs, or when the session's history holds no such turn.
   */
  terminal: TerminalPayload | null;
}

/**
 * Reads the durable history of `sessionId` (`session.replay`, which needs no control), from the start,
 * until it holds a terminal for each of `turnIds` or ends.
 */
export async function turnsInHistory(
  client: WireClient,
  sessionId: string,
  turnIds: ReadonlySet<string>,
): Promise<TurnsInHistory> {
  const found: TurnsInHistory = { started: new Set(), terminals: new Map() };
  let cursor: string | null = null;
  do {
    const page: ReplayResult = await typedCall<ReplayResult>(
      client,
      'session.replay',
      { cursor, limit: PAGE_RECORDS },
      { session: sessionId },
    );
    for (const record of page.records) {
      const data = record.data as Record<string, unknown> | null;
      const turnId = data?.turn_id;
      if (typeof turnId !== 'string' || !turnIds.has(turnId)) continue;
      if (record.kind === 'turn.user') found.started.add(turnId);
      if (record.kind === 'turn.terminal') found.terminals.set(turnId, terminalOf(data!));
    }
    if (found.terminals.size === turnIds.size) break;
    cursor = page.next_cursor;
  } while (cursor !== null);
  return found;
}

/**
 * Each of `turns` with its terminal, from its session's history; a session whose history the daemon
 * refuses to show is reported without terminals.
 */
export async function reportTurns(client: WireClient, turns: readonly KeptTurn[]): Promise<TurnReport[]> {
  const terminals = new Map<string, TerminalPayload>();
  for (const sessionId of new Set(turns.map((turn) => turn.session_id))) {
    const ids = new Set(turns.filter((turn) => turn.session_id === sessionId).map((turn) => turn.turn_id));
    try {
      for (const [turnId, terminal] of (await turnsInHistory(client, sessionId, ids)).terminals) {
        terminals.set(turnId, terminal);
      }
    } catch (error) {
      if (!(error instanceof WireCallError)) throw error;
    }
  }
  return turns.map((turn) => ({ ...turn, terminal: terminals.get(turn.turn_id) ?? null }));
}

/**
 * A `turn.terminal` record's payload members: the record adds `calls` and `plan`, and leaves out a null
 * manifest, which the live terminal carries.
 */
function terminalOf(data: Record<string, unknown>): TerminalPayload {
  const recorded = data as unknown as TerminalPayload;
  return {
    turn_id: recorded.turn_id,
    status: recorded.status,
    error: recorded.error,
    assistant_text: recorded.assistant_text,
    activity_dropped: recorded.activity_dropped,
    application_manifest: recorded.application_manifest ?? null,
  };
}
