import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { WireError } from '../errors.js';
import { HistoryWriter } from './history-writer.js';
import {
  type DurableResult,
  type DurableWrite,
  encodeRecord,
  type HistoryRecord,
  HistoryWrites,
  openHistoryDatabase,
  type RecordInput,
  recorded,
} from './history-writes.js';

export type { HistoryRecord, RecordInput } from './history-writes.js';

export interface SessionRow {
  session_id: string;
  workspace: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  grant_generation: number;
}

export interface Page<T> {
  items: T[];
  /** The last row's position, to resume after; null when nothing follows. */
  next: number | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL UNIQUE,
  workspace TEXT NOT NULL,
  workspace_real TEXT,
  title TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  grant_generation INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS records (
  sequence INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(session_id),
  kind TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_session ON records(session_id, sequence);
CREATE TABLE IF NOT EXISTS active_turns (
  turn_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(session_id),
  started_sequence INTEGER NOT NULL
);
`;

/** How many sessions' workspaces the store keeps in memory. */
const WORKSPACES_REMEMBERED = 1_024;

/**
 * The durable store: sessions and their history records, in SQLite (WAL, synchronous=FULL), so a
 * committed record survives a crash of the daemon. Every call is synchronous and short, on the main
 * thread's connection; `writer` makes the turns' and titles' writes instead, which many sessions make at
 * once, on the history writer thread's connection, in group commits.
 */
export class HistoryStore {
  /** The durable writes made off the main thread; each resolves once it is committed. */
  readonly writer: HistoryWriter;
  readonly #db: Database.Database;
  /** Workspaces of the sessions looked up recently; see workspaceOf. */
  readonly #workspaces = new Map<string, string>();
  readonly #writes: HistoryWrites;
  readonly #statements;
  #closing: Promise<void> | null = null;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // This connection's writes may meet the writer thread's write lock: its busy timeout makes them wait
    // for that short transaction instead of failing. Reads never wait (WAL readers see what is committed).
    this.#db = openHistoryDatabase(file);
    this.#db.exec(SCHEMA);
    // A store made before workspaces were pinned has no column for their real paths: its sessions get
    // theirs at their first use.
    const columns = this.#db.prepare('PRAGMA table_info(sessions)').all() as Array<{ name: string }>;
    if (!columns.some((column) => column.name === 'workspace_real'))
      this.#db.exec('ALTER TABLE sessions ADD COLUMN workspace_real TEXT');
    this.#writes = new HistoryWrites(this.#db);
    this.writer = new HistoryWriter(file);
    this.#statements = {
      insertSession: this.#db.prepare(
        'INSERT INTO sessions (session_id, workspace, workspace_real, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      session: this.#db.prepare(
        'SELECT session_id, workspace, title, created_at, updated_at, grant_generation FROM sessions WHERE session_id = ?',
      ),
      nextGeneration: this.#db.prepare(
        'UPDATE sessions SET grant_generation = grant_generation + 1, updated_at = ? WHERE session_id = ? RETURNING grant_generation',
      ),
      listSessions: this.#db.prepare(
        'SELECT position, session_id, workspace, title, created_at, updated_at, grant_generation FROM sessions WHERE position > ? ORDER BY position LIMIT ?',
      ),
      countSessions: this.#db.prepare('SELECT count(*) AS n FROM sessions'),
      workspaceReal: this.#db.prepare('SELECT workspace_real FROM sessions WHERE session_id = ?'),
      pinWorkspaceReal: this.#db.prepare(
        'UPDATE sessions SET workspace_real = ? WHERE session_id = ? AND workspace_real IS NULL',
      ),
      records: this.#db.prepare(
        'SELECT sequence, kind, created_at, data FROM records WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      ),
      activeTurns: this.#db.prepare(
        'SELECT turn_id, session_id, started_sequence FROM active_turns ORDER BY started_sequence',
      ),
      lastRecordsOfKind: this.#db.prepare(
        'SELECT sequence, kind, created_at, data FROM records WHERE session_id = ? AND kind = ? ORDER BY sequence DESC LIMIT ?',
      ),
      recordsOfKindSince: this.#db.prepare(
        'SELECT sequence, kind, created_at, data FROM records WHERE session_id = ? AND sequence >= ? AND kind = ? ORDER BY sequence',
      ),
    };
  }

  /**
   * Makes a session; `workspace_real` is its workspace's real path, the one every tool call checks (a
   * session made without it has it pinned at its first use).
   */
  createSession(
    session: Omit<SessionRow, 'grant_generation'> & { workspace_real?: string },
    firstRecord: RecordInput,
  ): HistoryRecord {
    const encoded = encodeRecord(firstRecord);
    const sequence = this.#db
      .transaction(() => {
        this.#statements.insertSession.run(
          session.session_id,
          session.workspace,
          session.workspace_real ?? null,
          session.title,
          session.created_at,
          session.updated_at,
        );
        return this.#writes.insertRecord(session.session_id, encoded);
      })
      .immediate();
    return recorded(firstRecord, sequence);
  }

  session(sessionId: string): SessionRow | undefined {
    return this.#statements.session.get(sessionId) as SessionRow | undefined;
  }

  /**
   * The session's workspace, or null when no such session exists. Sessions are never deleted and their
   * workspace never changes, so each is read from the store once and then remembered (the most recent
   * WORKSPACES_REMEMBERED of them).
   */
  workspaceOf(sessionId: string): string | null {
    const known = this.#workspaces.get(sessionId);
    if (known !== undefined) return known;
    const workspace = this.session(sessionId)?.workspace;
    if (workspace === undefined) return null;
    if (this.#workspaces.size >= WORKSPACES_REMEMBERED) this.#workspaces.clear();
    this.#workspaces.set(sessionId, workspace);
    return workspace;
  }

  /** The real path the session's workspace was pinned at, or null (no such session, or none pinned yet). */
  workspaceRealOf(sessionId: string): string | null {
    const row = this.#statements.workspaceReal.get(sessionId) as
      | { workspace_real: string | null }
      | undefined;
    return row?.workspace_real ?? null;
  }

  /** Pins the real path of a session made before workspaces were pinned; one pinned already stays. */
  pinWorkspaceReal(sessionId: string, real: string): void {
    this.#statements.pinWorkspaceReal.run(real, sessionId);
  }

  /** Durably allocates the session's next grant generation, so generations only grow, across restarts too. */
  nextGrantGeneration(sessionId: string, now: number): number {
    const row = this.#statements.nextGeneration.get(now, sessionId) as
      | { grant_generation: number }
      | undefined;
    if (!row) throw new WireError('unknown_session');
    return row.grant_generation;
  }

  appendRecord(sessionId: string, record: RecordInput): HistoryRecord {
    return recorded(record, this.#apply({ op: 'appendRecord', sessionId, record: encodeRecord(record) }));
  }

  /** Records a turn's terminal and clears its active mark, in one transaction. */
  endTurn(sessionId: string, turnId: string, record: RecordInput): HistoryRecord {
    return recorded(record, this.#apply({ op: 'endTurn', sessionId, turnId, record: encodeRecord(record) }));
  }

  /** Turns whose start is recorded and whose terminal is not: a daemon stopped while they ran. */
  activeTurns(): ActiveTurnRow[] {
    return this.#statements.activeTurns.all() as ActiveTurnRow[];
  }

  /** A session's records of one kind from `sequence` on (a turn's own records start at its start record). */
  recordsOfKind(sessionId: string, fromSequence: number, kind: string): HistoryRecord[] {
    const rows = this.#statements.recordsOfKindSince.all(sessionId, fromSequence, kind) as StoredRecord[];
    return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> }));
  }

  /** A session's last `limit` records of one kind, oldest first. */
  lastRecordsOfKind(sessionId: string, kind: string, limit: number): HistoryRecord[] {
    const rows = this.#statements.lastRecordsOfKind.all(sessionId, kind, limit) as StoredRecord[];
    return rows.reverse().map((row) => ({ ...row, data: JSON.parse(row.data) as Record<string, unknown> }));
  }

  listSessions(after: number, limit: number): Page<SessionRow> {
    const rows = this.#statements.listSessions.all(after, limit + 1) as Array<
      SessionRow & { position: number }
    >;
    const items = rows.slice(0, limit);
    const next = rows.length > limit ? items[items.length - 1]!.position : null;
    return { items: items.map(({ position: _position, ...row }) => row), next };
  }

  countSessions(): number {
    return (this.#statements.countSessions.get() as { n: number }).n;
  }

  /**
   * A page of records after `after`, at most `limit` of them and at most `maxBytes` of encoded records.
   * A record larger than a whole page is returned with its data left out (`omitted: true`), never cut.
   */
  records(sessionId: string, after: number, limit: number, maxBytes: number): Page<PagedRecord> {
    const rows = this.#statements.records.all(sessionId, after, limit + 1) as StoredRecord[];
    const items: PagedRecord[] = [];
    let bytes = 0;
    for (const row of rows.slice(0, limit)) {
      const size = recordPageBytes(row.kind, Buffer.byteLength(row.data));
      if (size > maxBytes) {
        if (items.length > 0) break;
        items.push({
          sequence: row.sequence,
          kind: row.kind,
          created_at: row.created_at,
          data: null,
          omitted: true,
        });
        bytes = maxBytes;
        continue;
      }
      if (bytes + size > maxBytes) break;
      bytes += size;
      items.push({ ...row, data: JSON.parse(row.data) as Record<string, unknown>, omitted: false });
    }
    const more = rows.length > items.length;
    return { items, next: more ? items[items.length - 1]!.sequence : null };
  }

  /**
   * Refuses later durable writes, and resolves once every one already made is committed and answered and
   * both connections are closed.
   */
  close(): Promise<void> {
    this.#closing ??= this.writer.close().then(() => {
      this.#db.close();
    });
    return this.#closing;
  }

  /** One of the store's writes on this thread's connection, in a transaction of its own. */
  #apply<W extends DurableWrite>(write: W): DurableResult<W> {
    return this.#db.transaction(() => this.#writes.apply(write)).immediate();
  }
}

/**
 * What one record counts against a replay page's bytes: its encoded data, its kind, and 64 bytes for the
 * rest of its encoding. A record whose count passes a whole page replays as `omitted`.
 */
export function recordPageBytes(kind: string, dataBytes: number): number {
  return dataBytes + kind.length + 64;
}

export interface ActiveTurnRow {
  turn_id: string;
  session_id: string;
  started_sequence: number;
}

interface StoredRecord {
  sequence: number;
  kind: string;
  created_at: number;
  data: string;
}

export interface PagedRecord {
  sequence: number;
  kind: string;
  created_at: number;
  data: Record<string, unknown> | null;
  omitted: boolean;
}
