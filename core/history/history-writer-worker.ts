import { parentPort, workerData } from 'node:worker_threads';
import { isWireError } from '../errors.js';
import { GroupCommit } from './group-commit.js';
import { type DurableWrite, HistoryWrites, openHistoryDatabase } from './history-writes.js';

/** What the history writer thread is sent: a write, numbered so its answer can be matched, or the close. */
export type WriterMessage = { id: number; write: DurableWrite } | { close: true };

/**
 * The thread's answers: each write's result once its transaction is durable, with that transaction's number
 * on this thread's connection, or its refusal; and, last, that the connection is closed.
 */
export type WriterAnswer =
  | { id: number; ok: true; value: number | boolean; transaction: number }
  | { id: number; ok: false; code: string; message: string }
  | { closed: true };

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

  const apply = (id: number, write: DurableWrite): void => {
    const answered = commits
      .enqueue(() => writes.apply(write))
      .then(
        (value) =>
          port.postMessage({ id, ok: true, value, transaction: transactions } satisfies WriterAnswer),
        (error: unknown) => {
          // A refusal of the store keeps its code and message; anything else (SQLite's own errors, which
          // name tables and paths) is an internal error.
          const answer: WriterAnswer = isWireError(error)
            ? { id, ok: false, code: error.code, message: error.message }
            : { id, ok: false, code: 'internal_error', message: '' };
          port.postMessage(answer);
        },
      );
    answering.add(answered);
    void answered.finally(() => answering.delete(answered));
  };

  const close = async (): Promise<void> => {
    // Everything that arrived before the close is committed and answered before the connection closes.
    commits.close();
    await Promise.allSettled([...answering]);
    db.close();
    port.postMessage({ closed: true } satisfies WriterAnswer);
  };

  port.on('message', (message: WriterMessage) => {
    if ('close' in message) void close();
    else apply(message.id, message.write);
  });
}
