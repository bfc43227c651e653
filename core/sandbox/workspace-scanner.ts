import { SANDBOX_SCAN_LIMITS } from './command-limits.js';
import { ScanRefusal } from './scan-refusal.js';
import { ScanThread } from './scan-thread.js';
import type { ScannedWorkspace, ScanRequest } from './workspace-scan.js';

/**
 * The scan threads of the workspaces commands run in: one per workspace (by the path it is asked with), so
 * that a workspace is never scanned twice at once, what one scan learned serves the next, and a slow or hung
 * workspace holds back only its own commands. At most `threads` are kept: a workspace without one takes over
 * the idle thread of the workspace scanned least recently (what that thread learned is dropped), or waits
 * while every thread is busy.
 */
export class WorkspaceScanner {
  readonly #threadsMax: number;
  /** By workspace, the one scanned least recently first. */
  readonly #threads = new Map<string, ScanThread>();
  #waiting: Array<() => void> = [];
  #closed = false;

  constructor(threads: number = SANDBOX_SCAN_LIMITS.threads) {
    if (!Number.isSafeInteger(threads) || threads < 1)
      throw new RangeError('the thread count must be a positive integer');
    this.#threadsMax = threads;
  }

  /** Whether a scan of the workspace would start from what an earlier one learned. */
  known(workspace: string): boolean {
    return this.#threads.get(workspace)?.known ?? false;
  }

  /** Threads kept now, busy or idle. */
  get threads(): number {
    return this.#threads.size;
  }

  /**
   * Rejects with the signal's reason when it aborts first (the scan is then stopped), else with a
   * ScanRefusal when the workspace cannot be prepared or the scanner is closed.
   */
  async scan(request: ScanRequest, signal: AbortSignal): Promise<ScannedWorkspace> {
    for (;;) {
      if (this.#closed) throw new ScanRefusal('workspace_unavailable');
      signal.throwIfAborted();
      const thread = this.#take(request.workspace);
      if (thread !== null) {
        const scanning = thread.scan(request, signal);
        void thread.answered.then(() => this.#wake());
        return scanning;
      }
      await this.#threadFreed(signal);
    }
  }

  /** Ends every thread; a scan in progress or waiting is refused. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#wake();
    const threads = [...this.#threads.values()];
    this.#threads.clear();
    await Promise.all(threads.map((thread) => thread.close()));
  }

  /** The workspace's thread, a new one, or the idle thread of another workspace; null while all are busy. */
  #take(workspace: string): ScanThread | null {
    const kept = this.#threads.get(workspace);
    if (kept !== undefined) {
      this.#threads.delete(workspace);
      this.#threads.set(workspace, kept);
      return kept;
    }
    let thread: ScanThread;
    if (this.#threads.size >= this.#threadsMax) {
      const idle = [...this.#threads].find(([, other]) => other.asked === 0 && !other.busy);
      if (idle === undefined) return null;
      this.#threads.delete(idle[0]);
      thread = idle[1];
      // Its next scan finds another workspace than the one it keeps, and starts afresh.
      thread.forget();
    } else thread = new ScanThread();
    this.#threads.set(workspace, thread);
    return thread;
  }

  #threadFreed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.#waiting = this.#waiting.filter((other) => other !== waiter);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const waiter of waiting) waiter();
  }
}
