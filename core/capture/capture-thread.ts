import type { Worker } from 'node:worker_threads';
import type { Clock } from '../clock.js';
import { knownErrorCode, WireError } from '../errors.js';
import { startModuleWorker } from '../module-worker.js';
import type { CaptureAnswer, CaptureJob } from './capture-worker.js';
import type { WorkspaceRead, WorkspaceReader, WorkspaceReadRequest } from './workspace-reader.js';

interface PendingRead {
  resolve(read: WorkspaceRead): void;
  reject(error: WireError): void;
}

const WORKER_URL = new URL(
  `./capture-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/**
 * The daemon's one capture worker thread (capture-worker.ts), started on the first workspace read. Reads are
 * answered in order; the registry's single capture slot means there is at most one at a time. A worker that
 * fails is replaced on the next read, and its reads fail with `internal_error`.
 */
export class CaptureThread implements WorkspaceReader {
  readonly #clock: Clock;
  #worker: Worker | null = null;
  readonly #pending = new Map<number, PendingRead>();
  #nextId = 0;
  #idle: (() => void) | null = null;
  #closed = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Whether a read is waiting for the worker. */
  get busy(): boolean {
    return this.#pending.size > 0;
  }

  read(request: WorkspaceReadRequest): Promise<WorkspaceRead> {
    if (this.#closed) return Promise.reject(new WireError('shutting_down'));
    const worker = this.#worker ?? this.#start();
    this.#nextId += 1;
    const job: CaptureJob = {
      id: this.#nextId,
      workspace: request.workspace,
      path: request.path,
      maxBytes: request.maxBytes,
      excludedDirectories: [...request.excludedDirectories],
    };
    return new Promise((resolve, reject) => {
      this.#pending.set(job.id, { resolve, reject });
      worker.postMessage(job);
    });
  }

  async close(graceMs: number): Promise<boolean> {
    this.#closed = true;
    if (this.busy) {
      await new Promise<void>((resolve) => {
        const timer = this.#clock.setTimeout(resolve, graceMs);
        this.#idle = () => {
          timer.cancel();
          resolve();
        };
      });
    }
    const drained = !this.busy;
    const worker = this.#worker;
    this.#worker = null;
    this.#failPending(new WireError('shutting_down'));
    // A thread blocked in a filesystem call cannot be stopped; terminating it is only asked for then.
    if (worker && drained) await worker.terminate();
    else void worker?.terminate();
    return drained;
  }

  #start(): Worker {
    const worker = startModuleWorker(WORKER_URL);
    worker.unref();
    worker.on('message', (answer: CaptureAnswer) => this.#settle(answer));
    worker.on('error', () => this.#lose(worker));
    worker.on('exit', () => this.#lose(worker));
    this.#worker = worker;
    return worker;
  }

  #settle(answer: CaptureAnswer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    if (answer.ok) {
      const { bytes } = answer;
      pending.resolve({
        bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        contentSha256: answer.contentSha256,
        text: answer.text,
      });
    } else {
      pending.reject(new WireError(knownErrorCode(answer.code), answer.message || undefined));
    }
    if (!this.busy) this.#idle?.();
  }

  /** The worker died: its reads fail, and the next read starts a new one. */
  #lose(worker: Worker): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    this.#failPending(new WireError('internal_error'));
  }

  #failPending(error: WireError): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const read of pending) read.reject(error);
    this.#idle?.();
  }
}
