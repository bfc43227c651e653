import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { WireError } from '../errors.js';
import { WIRE_LIMITS } from '../limits.js';
import { GroupCommit } from './group-commit.js';

export interface SessionRow {
  session_id: string;
  workspace: string;
  title: string | null;
  created_at: number;
  updated_at: number;
  grant_generation: number;
}

export interface HistoryRecord {
  sequence: number;
  kind: string;
  created_at: number;
  data: Record<string, unknown>;
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

/**
 * The durable store: sessions and their history records, in SQLite (WAL, synchronous=FULL), so a
 * committed record survives a crash of the daemon. Every call is synchronous and short; `durably` queues
 * writes into a group commit instead, for the turns' records, which many sessions write at once.
 */
export class HistoryStore {
  readonly #db: Database.Database;
  readonly #statements;
  readonly #commits: GroupCommit;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.#db = new Database(file);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.pragma('foreign_keys = ON');
    this.#db.exec(SCHEMA);
    this.#statements = {
      insertSession: this.#db.prepare(
        'INSERT INTO sessions (session_id, workspace, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      ),
      session: this.#db.prepare(
        'SELECT session_id, workspace, title, created_at, updated_at, grant_generation FROM sessions WHERE session_id = ?',
      ),
      nextGeneration: this.#db.prepare(
        'UPDATE sessions SET grant_generation = grant_generation + 1, updated_at = ? WHERE session_id = ? RETURNING grant_generation',
      ),
      touch: this.#db.prepare('UPDATE sessions SET updated_at = ? WHERE session_id = ?'),
      setTitle: this.#db.prepare(
        'UPDATE sessions SET title = ?, updated_at = ? WHERE session_id = ? AND title IS NULL',
      ),
      listSessions: this.#db.prepare(
        'SELECT position, session_id, workspace, title, created_at, updated_at, grant_generation FROM sessions WHERE position > ? ORDER BY position LIMIT ?',
      ),
      countSessions: this.#db.prepare('SELECT count(*) AS n FROM sessions'),
      insertRecord: this.#db.prepare(
        'INSERT INTO records (session_id, kind, created_at, data) VALUES (?, ?, ?, ?) RETURNING sequence',
      ),
      records: this.#db.prepare(
        'SELECT sequence, kind, created_at, data FROM records WHERE session_id = ? AND sequence > ? ORDER BY sequence LIMIT ?',
      ),
      insertActiveTurn: this.#db.prepare(
        'INSERT INTO active_turns (turn_id, session_id, started_sequence) VALUES (?, ?, ?)',
      ),
      deleteActiveTurn: this.#db.prepare('DELETE FROM active_turns WHERE turn_id = ?'),
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
    const inTransaction = this.#db.transaction((write: () => unknown) => write());
    this.#commits = new GroupCommit({
      transaction: (writes) => inTransaction(writes),
      // Called inside the group's transaction, the same function opens a savepoint.
      savepoint: (write) => inTransaction(write),
    });
  }

  /**
   * Queues `write` (any of this store's writes) into the group commit: it runs in order with the writes
   * queued before it and resolves once the transaction holding it is durable.
   */
  durably<T>(write: () => T): Promise<T> {
    return this.#commits.enqueue(write);
  }

  createSession(session: Omit<SessionRow, 'grant_generation'>, firstRecord: RecordInput): HistoryRecord {
    return this.#db.transaction(() => {
      this.#statements.insertSession.run(
        session.session_id,
        session.workspace,
        session.title,
        session.created_at,
        session.updated_at,
      );
      return this.#insertRecord(session.session_id, firstRecord);
    })();
  }

  session(sessionId: string): SessionRow | undefined {
    return this.#statements.session.get(sessionId) as SessionRow | undefined;
  }

  /** Durably allocates the session's next grant generation, so generations only grow, across restarts too. */
  nextGrantGeneration(sessionId: string, now: number): number {
    const row = this.#statements.nextGeneration.get(now, sessionId) as
      | { grant_generation: number }
      | undefined;
    if (!row) throw new WireError('unknown_session');
    return row.grant_generation;
  }

  /**
   * Gives a session without a title its title, and moves its `updated_at` to `now`; false when the session
   * has a title already (it is never replaced) or does not exist.
   */
  setTitle(sessionId: string, title: string, now: number): boolean {
    return this.#statements.setTitle.run(title, now, sessionId).changes === 1;
  }

  appendRecord(sessionId: string, record: RecordInput): HistoryRecord {
    return this.#db.transaction(() => {
      this.#statements.touch.run(record.created_at, sessionId);
      return this.#insertRecord(sessionId, record);
    })();
  }

  /**
   * Records a turn's start and marks it active, in one transaction: a daemon that dies before the turn's
   * terminal finds it at its next start (`activeTurns`).
   */
  beginTurn(sessionId: string, turnId: string, record: RecordInput): HistoryRecord {
    return this.#db.transaction(() => {
      this.#statements.touch.run(record.created_at, sessionId);
      const inserted = this.#insertRecord(sessionId, record);
      this.#statements.insertActiveTurn.run(turnId, sessionId, inserted.sequence);
      return inserted;
    })();
  }

  /** Records a turn's terminal and clears its active mark, in one transaction. */
  endTurn(sessionId: string, turnId: string, record: RecordInput): HistoryRecord {
    return this.#db.transaction(() => {
      this.#statements.touch.run(record.created_at, sessionId);
      const inserted = this.#insertRecord(sessionId, record);
      this.#statements.deleteActiveTurn.run(turnId);
      return inserted;
    })();
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
      const size = Buffer.byteLength(row.data) + row.kind.length + 64;
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

  close(): void {
    if (!this.#db.open) return;
    this.#commits.close();
    this.#db.close();
  }

  #insertRecord(sessionId: string, record: RecordInput): HistoryRecord {
    const data = JSON.stringify(record.data);
    const encoded = `{"sequence":${Number.MAX_SAFE_INTEGER},"kind":${JSON.stringify(record.kind)},"created_at":${record.created_at},"data":${data}}`;
    if (Buffer.byteLength(encoded) > WIRE_LIMITS.record_bytes) {
      throw new WireError('limit_exceeded', 'the history record would exceed the record limit');
    }
    const row = this.#statements.insertRecord.get(sessionId, record.kind, record.created_at, data) as {
      sequence: number;
    };
    return { sequence: row.sequence, kind: record.kind, created_at: record.created_at, data: record.data };
  }
}

export interface ActiveTurnRow {
  turn_id: string;
  session_id: string;
  started_sequence: number;
}

export interface RecordInput {
  kind: string;
  created_at: number;
  data: Record<string, unknown>;
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
