import type { Worker } from 'node:worker_threads';
import { knownErrorCode, WireError } from '../errors.js';
import { startModuleWorker } from '../module-worker.js';
import type {
  PostedWrite,
  WriteAnswer,
  WriterAnswer,
  WriterData,
  WriterMessage,
} from './history-writer-worker.js';
import {
  type DurableResult,
  type DurableWrite,
  type EncodedRecord,
  encodeRecord,
  type HistoryRecord,
  type RecordInput,
  recorded,
} from './history-writes.js';

interface PendingWrite {
  resolve(value: number | boolean): void;
  reject(error: WireError): void;
}

const WORKER_URL = new URL(
  `./history-writer-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/**
 * The store's durable writes, made by the history writer thread (history-writer-worker.ts) on its own
 * connection, started on the first write. The writes made before this thread's next check phase are posted
 * together, in call order, and the thread commits what it is sent together, in that order: concurrent
 * turns share a commit, and its fsync, as they did when the main thread committed them. Each promise
 * settles once the transaction holding its write is durable. A record too large is refused here, before
 * anything is posted. A thread that dies fails its writes with `internal_error`, and the next write starts
 * a new one.
 */
export class HistoryWriter {
  readonly #file: string;
  #worker: Worker | null = null;
  readonly #pending = new Map<number, PendingWrite>();
  /** Writes made since the last post, posted together at the next check phase. */
  #outbox: PostedWrite[] = [];
  #nextId = 0;
  #closing: Promise<void> | null = null;
  #closed: (() => void) | null = null;
  #transactions = 0;
  #diskFull = false;

  constructor(file: string) {
    this.#file = file;
  }

  /** Records a turn's start and marks the turn active, together. */
  async beginTurn(sessionId: string, turnId: string, record: RecordInput): Promise<HistoryRecord> {
    const encoded = encodeRecord(record);
    return recorded(record, await this.write({ op: 'beginTurn', sessionId, turnId, record: encoded }));
  }

  /** Records a turn's terminal and clears its active mark, together. */
  async endTurn(sessionId: string, turnId: string, record: RecordInput): Promise<HistoryRecord> {
    const encoded = encodeRecord(record);
    return recorded(record, await this.write({ op: 'endTurn', sessionId, turnId, record: encoded }));
  }

  async appendRecord(sessionId: string, record: RecordInput): Promise<HistoryRecord> {
    const encoded: EncodedRecord = encodeRecord(record);
    return recorded(record, await this.write({ op: 'appendRecord', sessionId, record: encoded }));
  }

  /** Gives an untitled session its title; false when it has one already or does not exist. */
  setTitle(sessionId: string, title: string, now: number): Promise<boolean> {
    return this.write({ op: 'setTitle', sessionId, title, now });
  }

  /** Posts `write` to the writer thread; every durable write goes through here. */
  write<W extends DurableWrite>(write: W): Promise<DurableResult<W>> {
    if (this.#closing) return Promise.reject(new WireError('shutting_down'));
    const worker = this.#worker ?? this.#start();
    this.#nextId += 1;
    const id = this.#nextId;
    return new Promise<DurableResult<W>>((resolve, reject) => {
      // A write in flight keeps the process alive, as a file write would; an idle thread does not.
      if (this.#pending.size === 0) worker.ref();
      this.#pending.set(id, { resolve: resolve as (value: number | boolean) => void, reject });
      if (this.#outbox.length === 0) setImmediate(() => this.#post());
      this.#outbox.push({ id, write });
    });
  }

  /**
   * Refuses later writes, and resolves once every write already posted is committed and answered and the
   * thread's connection is closed.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Whether the last write answered failed because the disk was full; the next one that commits clears it. */
  get diskFull(): boolean {
    return this.#diskFull;
  }

  /** The number of the last transaction the current thread reported committing; for tests. */
  get transactions(): number {
    return this.#transactions;
  }

  /** Stops the thread as a crash would; for tests. */
  async terminate(): Promise<void> {
    await this.#worker?.terminate();
  }

  async #close(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    worker.ref();
    this.#post();
    await new Promise<void>((resolve) => {
      this.#closed = resolve;
      worker.postMessage({ close: true } satisfies WriterMessage);
    });
    this.#worker = null;
    await worker.terminate();
  }

  /** Posts the writes made since the last post to the current thread (those of a lost one were failed). */
  #post(): void {
    const writes = this.#outbox;
    if (writes.length === 0) return;
    this.#outbox = [];
    this.#worker?.postMessage({ writes } satisfies WriterMessage);
  }

  #start(): Worker {
    const worker = startModuleWorker(WORKER_URL, { file: this.#file } satisfies WriterData);
    worker.unref();
    worker.on('message', (answer: WriterAnswer) => this.#settle(worker, answer));
    worker.on('error', () => this.#lose(worker));
    worker.on('exit', () => this.#lose(worker));
    this.#worker = worker;
    this.#transactions = 0;
    return worker;
  }

  #settle(worker: Worker, answer: WriterAnswer): void {
    if ('closed' in answer) {
      this.#closed?.();
      return;
    }
    for (const settled of answer.answers) this.#answer(settled);
    // While closing, the thread stays referenced until it reports its connection closed.
    if (this.#pending.size === 0 && !this.#closing) worker.unref();
  }

  #answer(answer: WriteAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    if (answer.ok) {
      this.#transactions = answer.transaction;
      this.#diskFull = false;
      pending.resolve(answer.value);
    } else {
      if (answer.code === 'storage_full') this.#diskFull = true;
      pending.reject(new WireError(knownErrorCode(answer.code), answer.message || undefined));
    }
  }

  /** The thread died: its writes fail, and the next write starts a new one. */
  #lose(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#outbox = [];
    for (const write of pending) write.reject(new WireError('internal_error'));
    this.#closed?.();
  }
}
