import { parentPort, workerData } from 'node:worker_threads';
import { isWireError } from '../errors.js';
import { GroupCommit } from './group-commit.js';
import { isDiskFull } from './history-unavailable.js';
import { type DurableWrite, HistoryWrites, openHistoryDatabase } from './history-writes.js';

/** A write posted to the history writer thread, numbered so that its answer can be matched. */
export interface PostedWrite {
  id: number;
  write: DurableWrite;
}

/** What the history writer thread is sent: writes, in the order they were made, or the close. */
export type WriterMessage = { writes: PostedWrite[] } | { close: true };

/**
 * A write's answer, once the transaction holding it is durable: its result, with that transaction's number
 * on this thread's connection, or its refusal.
 */
export type WriteAnswer =
  | { id: number; ok: true; value: number | boolean; transaction: number }
  | { id: number; ok: false; code: string; message: string };

/** What the thread answers: the writes of a commit together, and, last, that its connection is closed. */
export type WriterAnswer = { answers: WriteAnswer[] } | { closed: true };

export interface WriterData {
  file: string;
}

/**
 * The history writer thread: its own connection to the store's file applies the writes it is sent in a
 * group commit, so that the main thread never waits for an INSERT, a COMMIT or an fsync. The writes that
 * arrive before this thread's next check phase share one transaction, each in its own savepoint, applied in
 * the order they arrived; each is answered once the COMMIT holding it has returned.
 */
const port = parentPort;
if (port) {
  const { file } = workerData as WriterData;
  const db = openHistoryDatabase(file);
  const writes = new HistoryWrites(db);
  const inTransaction = db.transaction((write: () => unknown) => write());
  let transactions = 0;
  const commits = new GroupCommit({
    transaction: (group) => {
      // Immediate: the group takes the write lock at its start, waiting for the main connection's.
      inTransaction.immediate(group);
      transactions += 1;
    },
    // Called inside the group's transaction, the same function opens a savepoint.
    savepoint: (write) => inTransaction(write),
  });
  const answering = new Set<Promise<void>>();
  let answers: WriteAnswer[] = [];

  /** Sends the answers gathered so far, in one message: a commit's writes settle together. */
  const sendAnswers = (): void => {
    if (answers.length === 0) return;
    port.postMessage({ answers } satisfies WriterAnswer);
    answers = [];
  };
  const answer = (settled: WriteAnswer): void => {
    if (answers.length === 0) queueMicrotask(sendAnswers);
    answers.push(settled);
  };

  const apply = ({ id, write }: PostedWrite): void => {
    const answered = commits
      .enqueue(() => writes.apply(write))
      .then(
        (value) => answer({ id, ok: true, value, transaction: transactions }),
        (error: unknown) =>
          // A refusal of the store keeps its code and message, a full disk says so; anything else (SQLite's
          // own errors, which name tables and paths) is an internal error.
          answer(
            isWireError(error)
              ? { id, ok: false, code: error.code, message: error.message }
              : { id, ok: false, code: isDiskFull(error) ? 'storage_full' : 'internal_error', message: '' },
          ),
      );
    answering.add(answered);
    void answered.finally(() => answering.delete(answered));
  };

  const close = async (): Promise<void> => {
    // Everything that arrived before the close is committed and answered before the connection closes.
    commits.close();
    await Promise.allSettled([...answering]);
    sendAnswers();
    db.close();
    port.postMessage({ closed: true } satisfies WriterAnswer);
  };

  port.on('message', (message: WriterMessage) => {
    if ('close' in message) void close();
    else for (const posted of message.writes) apply(posted);
  });
}
