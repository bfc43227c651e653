import type { Worker } from 'node:worker_threads';
import type { Clock } from '../clock.js';
import { knownErrorCode, WireError } from '../errors.js';
import { startModuleWorker } from '../module-worker.js';
import type { DescriptorHashes } from '../resources/revision-hash.js';
import type { CaptureAnswer, CaptureJob } from './capture-worker.js';
import type { WorkspaceRead, WorkspaceReader, WorkspaceReadRequest } from './workspace-reader.js';

/** A job the worker has not finished: its read until the bytes arrive, then its confirmation. */
interface PendingRead {
  read: { resolve(read: WorkspaceRead): void; reject(error: WireError): void } | null;
  confirm: { resolve(hashes: DescriptorHashes): void; reject(error: WireError): void };
  confirmed: Promise<DescriptorHashes>;
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
      resource: { ...request.resource },
    };
    let confirm!: PendingRead['confirm'];
    const confirmed = new Promise<DescriptorHashes>((resolve, reject) => {
      confirm = { resolve, reject };
    });
    // A read refused before its bytes arrived never hands its confirmation to anyone.
    confirmed.catch(() => {});
    return new Promise((resolve, reject) => {
      this.#pending.set(job.id, { read: { resolve, reject }, confirm, confirmed });
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
    if (answer.stage === 'read') {
      const { bytes } = answer;
      pending.read?.resolve({
        bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        text: answer.text,
        confirmed: pending.confirmed,
      });
      pending.read = null;
      return;
    }
    this.#pending.delete(answer.id);
    if (answer.stage === 'confirmed') {
      pending.confirm.resolve({ contentSha256: answer.contentSha256, revisionSha256: answer.revisionSha256 });
    } else {
      fail(pending, new WireError(knownErrorCode(answer.code), answer.message || undefined));
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
    for (const read of pending) fail(read, error);
    this.#idle?.();
  }
}

/** A refusal answers the read when its bytes have not arrived, and its confirmation either way. */
function fail(pending: PendingRead, error: WireError): void {
  pending.read?.reject(error);
  pending.confirm.reject(error);
}
