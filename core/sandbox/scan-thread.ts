import { close } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../module-worker.js';
import { ScanRefusal } from './scan-refusal.js';
import type { ScanAnswer, ScanWorkerData } from './scan-worker.js';
import type { ScannedWorkspace, ScanRequest, WorkspaceScan } from './workspace-scan.js';

const WORKER_URL = new URL(
  `./scan-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/** Every descriptor a scan holds: the caller closes them once the command has them. */
export function scanDescriptors(scan: WorkspaceScan): number[] {
  return [scan.root.fd, ...scan.pins.map((pin) => pin.fd), ...scan.readOnly.map((entry) => entry.fd)];
}

export function closeScan(scan: WorkspaceScan): void {
  for (const fd of scanDescriptors(scan)) close(fd, () => {});
}

/**
 * The thread that scans one workspace, one scan at a time in the order they were asked for, and keeps what its
 * scans learned (scan-cache.ts) for the next. The descriptors a scan opens are the main thread's from its
 * answer on, so the thread is started without Node's tracking of them, which would close them by number when
 * it exits. A scan given up (its command aborted or out of time) is answered at once with its signal's reason
 * and its walk is asked to stop, which ends it at its next folder with every descriptor closed; the thread
 * takes the next scan only once it has answered (a late answer has its descriptors closed). A walk blocked
 * in a hung filesystem so holds back only the scans of its own workspace.
 */
export class ScanThread {
  #worker: Worker | null = null;
  #stop: Int32Array = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  /** Settles once every scan asked for so far has been answered (or given up before it was sent). */
  #tail: Promise<void> = Promise.resolve();
  #asked = 0;
  #sent = false;
  #known = false;
  #closed = false;
  /** Fails the scan in progress, if any. */
  #fail: ((error: unknown) => void) | null = null;
  /** Fail each scan waiting for its turn. */
  readonly #waiting = new Set<(error: unknown) => void>();

  /** Scans asked for and not answered yet, the one the thread works on included. */
  get asked(): number {
    return this.#asked;
  }

  /** Whether the thread works on a scan now, answered to its caller or not. */
  get busy(): boolean {
    return this.#sent;
  }

  /** Whether a scan succeeded on this thread: the next one reads only what changed since. */
  get known(): boolean {
    return this.#known;
  }

  /** The thread's next scan starts afresh, as for a workspace it has not seen (scan-cache.ts keys its tree). */
  forget(): void {
    this.#known = false;
  }

  /** Settles once the thread has answered every scan asked of it so far. */
  get answered(): Promise<void> {
    return this.#tail;
  }

  /**
   * Rejects with the signal's reason when it aborts first, else with a ScanRefusal when the workspace cannot
   * be prepared or the thread is closed.
   */
  async scan(request: ScanRequest, signal: AbortSignal): Promise<ScannedWorkspace> {
    if (signal.aborted) throw signal.reason;
    const before = this.#tail;
    let release!: () => void;
    this.#tail = new Promise((resolve) => {
      release = resolve;
    });
    const first = this.#asked === 0;
    this.#asked += 1;
    // With none ahead the scan is sent at once, before anything else can run.
    if (!first) {
      try {
        await this.#turn(before, signal);
      } catch (error) {
        this.#asked -= 1;
        void before.then(release);
        throw error;
      }
    }
    if (this.#closed) {
      this.#asked -= 1;
      release();
      throw new ScanRefusal('workspace_unavailable');
    }
    return this.#send(request, signal, () => {
      this.#asked -= 1;
      release();
    });
  }

  /** Ends the thread; a scan in progress or waiting is refused, and a busy thread ends once it has answered. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    for (const refuse of this.#waiting) refuse(new ScanRefusal('workspace_unavailable'));
    if (worker === null) return;
    // A busy thread is stopped, and ends once it has answered (see #send).
    if (this.#sent) this.#fail?.(new ScanRefusal('workspace_unavailable'));
    else await worker.terminate();
  }

  #send(request: ScanRequest, signal: AbortSignal, done: () => void): Promise<ScannedWorkspace> {
    const worker = this.#worker ?? this.#start();
    this.#sent = true;
    return new Promise((resolve, reject) => {
      let givenUp = false;
      const giveUp = (error: unknown): void => {
        if (givenUp) return;
        givenUp = true;
        this.#fail = null;
        signal.removeEventListener('abort', onAbort);
        Atomics.store(this.#stop, 0, 1);
        worker.unref();
        reject(error);
      };
      const answered = (): void => {
        this.#fail = null;
        this.#sent = false;
        Atomics.store(this.#stop, 0, 0);
        signal.removeEventListener('abort', onAbort);
        worker.off('message', onAnswer);
        worker.off('exit', onExit);
        worker.unref();
        if (this.#closed) void worker.terminate();
        done();
      };
      const onAnswer = (answer: ScanAnswer): void => {
        answered();
        if (givenUp) {
          if (answer.ok) closeScan(answer.scan);
        } else if (answer.ok) {
          this.#known = true;
          resolve(answer.scan);
        } else reject(new ScanRefusal(answer.reason));
      };
      const onExit = (): void => {
        answered();
        if (this.#worker === worker) this.#worker = null;
        this.#known = false;
        if (!givenUp) reject(new ScanRefusal('workspace_unavailable'));
      };
      const onAbort = (): void => giveUp(signal.reason);
      this.#fail = giveUp;
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onAnswer);
      worker.on('exit', onExit);
      worker.ref();
      worker.postMessage(request);
    });
  }

  /** Resolves once the scans ahead have been answered; rejects when the signal aborts or the thread closes. */
  #turn(ahead: Promise<void>, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const settle = (error?: unknown): void => {
        signal.removeEventListener('abort', onAbort);
        this.#waiting.delete(settle);
        if (error === undefined) resolve();
        else reject(error);
      };
      const onAbort = (): void => settle(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.add(settle);
      void ahead.then(() => settle());
    });
  }

  #start(): Worker {
    const worker = startModuleWorker(WORKER_URL, { stop: this.#stop } satisfies ScanWorkerData, {
      trackUnmanagedFds: false,
    });
    worker.unref();
    // An uncaught error ends the thread; its 'exit' fails the scan in progress.
    worker.on('error', () => {});
    this.#worker = worker;
    return worker;
  }
}
