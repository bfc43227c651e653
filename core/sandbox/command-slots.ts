import { ScanThread } from './scan-thread.js';

/** One of the places a command runs in: held from before its scan until its sandbox is gone. */
export interface CommandSlot {
  readonly scanner: ScanThread;
  release(): void;
}

interface Waiter {
  grant(slot: CommandSlot): void;
}

/**
 * The bound on commands running at once: `size` slots, handed out in the order they were asked for. A wait
 * ends when a slot frees or its signal aborts (its command's time limit or its turn's end), so the wait
 * counts against the command's own time. Each slot keeps its own scan thread.
 */
export class CommandSlots {
  readonly #free: ScanThread[];
  readonly #all: readonly ScanThread[];
  #waiting: Waiter[] = [];
  #running = 0;

  constructor(size: number) {
    if (!Number.isSafeInteger(size) || size < 1)
      throw new RangeError('the slot count must be a positive integer');
    this.#all = Array.from({ length: size }, () => new ScanThread());
    this.#free = [...this.#all];
  }

  /** Commands holding a slot now. */
  get running(): number {
    return this.#running;
  }

  acquire(signal: AbortSignal): Promise<CommandSlot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const scanner = this.#free.shift();
    if (scanner) return Promise.resolve(this.#hand(scanner));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (slot) => {
          signal.removeEventListener('abort', onAbort);
          resolve(slot);
        },
      };
      const onAbort = (): void => {
        this.#waiting = this.#waiting.filter((queued) => queued !== waiter);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.#all.map((scanner) => scanner.close()));
  }

  #hand(scanner: ScanThread): CommandSlot {
    this.#running += 1;
    let released = false;
    return {
      scanner,
      release: () => {
        if (released) return;
        released = true;
        this.#running -= 1;
        const next = this.#waiting.shift();
        if (next) next.grant(this.#hand(scanner));
        else this.#free.push(scanner);
      },
    };
  }
}
