import { CaptureThread } from '../../core/capture/capture-thread.js';
import type {
  WorkspaceRead,
  WorkspaceReader,
  WorkspaceReadRequest,
} from '../../core/capture/workspace-reader.js';
import { systemClock } from '../../core/clock.js';

/**
 * A workspace reader that holds every read until the test releases it, then reads through the real capture
 * worker: a filesystem that answers exactly when the test says so.
 */
export class HeldReader implements WorkspaceReader {
  readonly #inner: WorkspaceReader;
  readonly #held: Array<() => void> = [];
  readonly #waiting: Array<() => void> = [];
  /** Every request the reader was asked to read, in order. */
  readonly requests: WorkspaceReadRequest[] = [];
  /** Reads that have been asked for and that the worker has not finished yet. */
  inFlight = 0;

  constructor(inner: WorkspaceReader = new CaptureThread(systemClock)) {
    this.#inner = inner;
  }

  async read(request: WorkspaceReadRequest): Promise<WorkspaceRead> {
    this.requests.push(request);
    this.inFlight += 1;
    const returned = () => {
      this.inFlight -= 1;
    };
    try {
      await new Promise<void>((resolve) => {
        this.#held.push(resolve);
        for (const wake of this.#waiting.splice(0)) wake();
      });
      const read = await this.#inner.read(request);
      // The worker is done with a read once it has confirmed or refused it.
      read.confirmed.then(returned, returned);
      return read;
    } catch (error) {
      returned();
      throw error;
    }
  }

  /** Resolves once a read is being held. */
  async waitForRead(): Promise<void> {
    if (this.#held.length > 0) return;
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  /** Lets every held read go on to the real worker, and waits until they have returned. */
  async release(): Promise<void> {
    for (const resume of this.#held.splice(0)) resume();
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  /** Like a filesystem that never answers: a held read makes closing give up on it. */
  async close(graceMs: number): Promise<boolean> {
    const drained = this.#held.length === 0;
    for (const resume of this.#held.splice(0)) resume();
    return (await this.#inner.close(graceMs)) && drained;
  }
}
