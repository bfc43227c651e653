/** One of the places a command runs in: held from its workspace's last check until its sandbox is gone. */
export interface CommandSlot {
  release(): void;
}

interface Waiter {
  grant(slot: CommandSlot): void;
}

/**
 * The bound on commands running at once: `size` slots, shared fairly between sessions. A session never holds
 * more than half of them (rounded up), so however long one session's commands run, they leave the other half
 * to the others. A free slot goes to the waiting session served least recently among those under that share
 * (round-robin), and within a session to its commands in the order they asked. A wait ends when a slot is granted or its signal aborts (its command's time limit,
 * or its turn's end).
 */
export class CommandSlots {
  readonly size: number;
  readonly #share: number;
  /** Commands waiting, by session, each session's in the order they asked; sessions in the order they came. */
  readonly #waiting = new Map<string, Waiter[]>();
  /** Slots held, by session. */
  readonly #held = new Map<string, number>();
  /** When each session with slots held or waiting was last granted one, as a count of grants. */
  readonly #served = new Map<string, number>();
  #grants = 0;
  #inUse = 0;

  constructor(size: number) {
    if (!Number.isSafeInteger(size) || size < 1)
      throw new RangeError('the slot count must be a positive integer');
    this.size = size;
    this.#share = Math.ceil(size / 2);
  }

  /** Slots held now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Commands waiting for a slot. */
  get waiting(): number {
    let count = 0;
    for (const queue of this.#waiting.values()) count += queue.length;
    return count;
  }

  /** Sessions with a command waiting for a slot. */
  get waitingSessions(): number {
    return this.#waiting.size;
  }

  /** Rejects with the signal's reason when it aborts before a slot is granted. */
  acquire(session: string, signal: AbortSignal): Promise<CommandSlot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: (slot) => {
          signal.removeEventListener('abort', onAbort);
          resolve(slot);
        },
      };
      const onAbort = (): void => {
        const queue = this.#waiting.get(session) ?? [];
        const left = queue.filter((queued) => queued !== waiter);
        if (left.length > 0) this.#waiting.set(session, left);
        else this.#waiting.delete(session);
        this.#forgetIfIdle(session);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const queue = this.#waiting.get(session);
      if (queue) queue.push(waiter);
      else this.#waiting.set(session, [waiter]);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#inUse < this.size) {
      const session = this.#next();
      if (session === null) return;
      const queue = this.#waiting.get(session)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.#waiting.delete(session);
      this.#inUse += 1;
      this.#held.set(session, (this.#held.get(session) ?? 0) + 1);
      this.#grants += 1;
      this.#served.set(session, this.#grants);
      waiter.grant(this.#slot(session));
    }
  }

  /** The waiting session to serve next: the one served least recently among those under their share. */
  #next(): string | null {
    let next: string | null = null;
    let nextServed = Number.POSITIVE_INFINITY;
    for (const session of this.#waiting.keys()) {
      if ((this.#held.get(session) ?? 0) >= this.#share) continue;
      const served = this.#served.get(session) ?? 0;
      if (served < nextServed) {
        next = session;
        nextServed = served;
      }
    }
    return next;
  }

  #slot(session: string): CommandSlot {
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#inUse -= 1;
        const held = (this.#held.get(session) ?? 1) - 1;
        if (held > 0) this.#held.set(session, held);
        else this.#held.delete(session);
        this.#forgetIfIdle(session);
        this.#dispatch();
      },
    };
  }

  #forgetIfIdle(session: string): void {
    if (!this.#held.has(session) && !this.#waiting.has(session)) this.#served.delete(session);
  }
}
