import type { WireClient } from '../client/index.js';
import { call } from './daemon-client.js';

/** A session as `session.list` describes it. */
export interface SessionSummary {
  session_id: string;
  title: string | null;
  workspace: string;
  created_at: number;
  updated_at: number;
  claimed: boolean;
}

/** A history record as `session.replay` returns it. */
export interface ReplayRecord {
  sequence: number;
  kind: string;
  created_at: number;
  data: Record<string, unknown> | null;
  omitted: boolean;
}

interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

const PAGE = 100;

/** Every durable session, oldest first, read a page at a time. */
export async function* allSessions(wire: WireClient): AsyncGenerator<SessionSummary> {
  let cursor: string | null = null;
  do {
    const page: { sessions: SessionSummary[]; next_cursor: string | null } = await call(
      wire,
      'session.list',
      {
        cursor,
        limit: PAGE,
      },
    );
    yield* page.sessions;
    cursor = page.next_cursor;
  } while (cursor !== null);
}

/** The session `sessionId` as `session.list` describes it, or null when there is none. */
export async function findSession(wire: WireClient, sessionId: string): Promise<SessionSummary | null> {
  for await (const session of allSessions(wire)) if (session.session_id === sessionId) return session;
  return null;
}

/** One page of a session's history from `cursor` (null: its start). */
export async function replayPage(
  wire: WireClient,
  sessionId: string,
  cursor: string | null,
): Promise<Page<ReplayRecord>> {
  const page: { records: ReplayRecord[]; next_cursor: string | null } = await call(
    wire,
    'session.replay',
    { cursor, limit: PAGE },
    { session: sessionId },
  );
  return { items: page.records, next_cursor: page.next_cursor };
}

/** A session's whole history, oldest first. */
export async function* allRecords(wire: WireClient, sessionId: string): AsyncGenerator<ReplayRecord> {
  let cursor: string | null = null;
  do {
    const page = await replayPage(wire, sessionId, cursor);
    yield* page.items;
    cursor = page.next_cursor;
  } while (cursor !== null);
}
