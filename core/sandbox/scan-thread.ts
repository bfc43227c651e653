import { close } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../module-worker.js';
import { SANDBOX_SCAN_LIMITS } from './command-limits.js';
import type { ScanAnswer, ScanWorkerData } from './scan-worker.js';
import { ScanRefusal, type ScanRequest, type WorkspaceScan } from './workspace-scan.js';

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

interface Thread {
  worker: Worker;
  stop: Int32Array;
  /** Fails the scan in progress, if any. */
  fail: ((error: unknown) => void) | null;
}

/**
 * One thread that walks workspaces for the commands of one slot, a scan at a time, kept between commands
 * so that its code stays warm. The descriptors a scan opens are the main thread's from its answer on, so
 * the thread is started without Node's tracking of them, which would close them by number when it exits.
 * A scan given up (its command aborted or out of time, or the sandbox closed) abandons the thread: it is
 * asked to stop, which ends its walk with every descriptor closed, its late answer's descriptors are
 * closed, it ends once it has answered, and the next scan starts a new thread.
 */
export class ScanThread {
  readonly #abandonedMax: number;
  #thread: Thread | null = null;
  #abandoned = 0;

  /**
   * `abandonedMax`: threads given up on that may still be alive (a walk blocked in a hung filesystem ends
   * only when the filesystem answers) before scans are refused: a hung workspace costs a bounded number of
   * threads, however many commands are asked for in it.
   */
  constructor(abandonedMax: number = SANDBOX_SCAN_LIMITS.abandoned_threads) {
    this.#abandonedMax = abandonedMax;
  }

  /** Threads given up on and not yet exited (a thread blocked in the kernel answers only once it returns). */
  get abandoned(): number {
    return this.#abandoned;
  }

  scan(request: ScanRequest, signal: AbortSignal): Promise<WorkspaceScan> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#abandoned >= this.#abandonedMax)
      return Promise.reject(new ScanRefusal('workspace_unavailable'));
    const thread = this.#thread ?? this.#start();
    const { worker } = thread;
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        thread.fail = null;
        signal.removeEventListener('abort', onAbort);
        worker.off('message', onAnswer);
        worker.off('exit', onExit);
      };
      const onAnswer = (answer: ScanAnswer): void => {
        settle();
        worker.unref();
        if (answer.ok) resolve(answer.scan);
        else reject(new ScanRefusal(answer.reason));
      };
      const onExit = (): void => {
        settle();
        if (this.#thread === thread) this.#thread = null;
        reject(new ScanRefusal('workspace_unavailable'));
      };
      const giveUp = (error: unknown): void => {
        settle();
        this.#abandon(thread);
        reject(error);
      };
      const onAbort = (): void => giveUp(signal.reason);
      thread.fail = giveUp;
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onAnswer);
      worker.on('exit', onExit);
      worker.ref();
      worker.postMessage(request);
    });
  }

  /** Ends the thread; a scan in progress is refused, and its thread ends once it has answered. */
  async close(): Promise<void> {
    const thread = this.#thread;
    if (thread === null) return;
    if (thread.fail !== null) {
      thread.fail(new ScanRefusal('workspace_unavailable'));
      return;
    }
    this.#thread = null;
    await thread.worker.terminate();
  }

  #start(): Thread {
    const stop = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
    const worker = startModuleWorker(WORKER_URL, { stop } satisfies ScanWorkerData, {
      trackUnmanagedFds: false,
    });
    worker.unref();
    // An uncaught error ends the thread; its 'exit' fails the scan in progress.
    worker.on('error', () => {});
    const thread: Thread = { worker, stop, fail: null };
    this.#thread = thread;
    return thread;
  }

  #abandon(thread: Thread): void {
    if (this.#thread === thread) this.#thread = null;
    this.#abandoned += 1;
    const { worker } = thread;
    Atomics.store(thread.stop, 0, 1);
    worker.once('message', (answer: ScanAnswer) => {
      if (answer.ok) closeScan(answer.scan);
      void worker.terminate();
    });
    worker.once('exit', () => {
      this.#abandoned -= 1;
    });
    worker.unref();
  }
}
