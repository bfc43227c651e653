import Database from 'better-sqlite3';
import { WireError } from '../errors.js';
import { WIRE_LIMITS } from '../limits.js';

/**
 * How long a connection waits for another connection's write lock before failing with SQLITE_BUSY. The
 * daemon writes through two connections, the main thread's and the history writer thread's; either one's
 * transactions are short (a group commit is one fsync), so a write meeting the other's lock waits for it.
 */
export const BUSY_TIMEOUT_MS = 5_000;

/** Opens a connection to the store's file as every connection of the daemon is opened. */
export function openHistoryDatabase(file: string): Database.Database {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  return db;
}

/** A history record as it is written: its data is JSON text, encoded where the record was made. */
export interface EncodedRecord {
  kind: string;
  created_at: number;
  data: string;
}

export interface RecordInput {
  kind: string;
  created_at: number;
  data: Record<string, unknown>;
}

/** A record as written: its input and the sequence the store gave it. */
export interface HistoryRecord extends RecordInput {
  sequence: number;
}

export function recorded(record: RecordInput, sequence: number): HistoryRecord {
  return { sequence, kind: record.kind, created_at: record.created_at, data: record.data };
}

/**
 * Encodes `record` for writing, refusing one whose encoding on the wire (with the largest sequence) would
 * exceed WIRE_LIMITS.record_bytes.
 */
export function encodeRecord(record: RecordInput): EncodedRecord {
  const data = JSON.stringify(record.data);
  const encoded = `{"sequence":${Number.MAX_SAFE_INTEGER},"kind":${JSON.stringify(record.kind)},"created_at":${record.created_at},"data":${data}}`;
  if (Buffer.byteLength(encoded) > WIRE_LIMITS.record_bytes) {
    throw new WireError('limit_exceeded', 'the history record would exceed the record limit');
  }
  return { kind: record.kind, created_at: record.created_at, data };
}

/**
 * A write of the store, by name, so that it can be posted to the history writer thread: each one is applied
 * there in one savepoint of a group commit.
 */
export type DurableWrite =
  | { op: 'beginTurn'; sessionId: string; turnId: string; record: EncodedRecord }
  | { op: 'endTurn'; sessionId: string; turnId: string; record: EncodedRecord }
  | { op: 'appendRecord'; sessionId: string; record: EncodedRecord }
  | { op: 'setTitle'; sessionId: string; title: string; now: number };

/** A write's result: whether the title was set, or else the sequence of the record it inserted. */
export type DurableResult<W extends DurableWrite> = W extends { op: 'setTitle' } ? boolean : number;

/** The writes of the store, prepared on one connection; the caller holds the transaction around each. */
export class HistoryWrites {
  readonly #statements;

  constructor(db: Database.Database) {
    this.#statements = {
      touch: db.prepare('UPDATE sessions SET updated_at = ? WHERE session_id = ?'),
      setTitle: db.prepare(
        'UPDATE sessions SET title = ?, updated_at = ? WHERE session_id = ? AND title IS NULL',
      ),
      insertRecord: db.prepare(
        'INSERT INTO records (session_id, kind, created_at, data) VALUES (?, ?, ?, ?) RETURNING sequence',
      ),
      insertActiveTurn: db.prepare(
        'INSERT INTO active_turns (turn_id, session_id, started_sequence) VALUES (?, ?, ?)',
      ),
      deleteActiveTurn: db.prepare('DELETE FROM active_turns WHERE turn_id = ?'),
    };
  }

  apply<W extends DurableWrite>(write: W): DurableResult<W>;
  apply(write: DurableWrite): number | boolean {
    const statements = this.#statements;
    switch (write.op) {
      case 'setTitle':
        return statements.setTitle.run(write.title, write.now, write.sessionId).changes === 1;
      case 'appendRecord':
        statements.touch.run(write.record.created_at, write.sessionId);
        return this.insertRecord(write.sessionId, write.record);
      case 'beginTurn': {
        // The turn is marked active with its start record, so a daemon that dies before the turn's
        // terminal finds it at its next start.
        statements.touch.run(write.record.created_at, write.sessionId);
        const sequence = this.insertRecord(write.sessionId, write.record);
        statements.insertActiveTurn.run(write.turnId, write.sessionId, sequence);
        return sequence;
      }
      case 'endTurn': {
        statements.touch.run(write.record.created_at, write.sessionId);
        const sequence = this.insertRecord(write.sessionId, write.record);
        statements.deleteActiveTurn.run(write.turnId);
        return sequence;
      }
    }
  }

  /** Inserts `record` into the session's history; returns its sequence. */
  insertRecord(sessionId: string, record: EncodedRecord): number {
    const row = this.#statements.insertRecord.get(sessionId, record.kind, record.created_at, record.data) as {
      sequence: number;
    };
    return row.sequence;
  }
}
