import type { Entry } from './operation-entries.js';
import { Queue } from './queue.js';

export interface RefusalBounds {
  /** Refusals retained in all. */
  refusals: number;
  /** Refusals of one connection. */
  connectionRefusals: number;
}

/** What keeping one more refusal did. */
export interface KeptRefusal {
  /** The refusal forgotten for it (already dropped), or null. */
  forgotten: Entry | null;
  /** Its connection held its share of refusals: its own oldest was forgotten. */
  ownFull: boolean;
  /** The store was full: the oldest of all was forgotten. */
  storeFull: boolean;
}

/**
 * Refusals that changed nothing, kept apart from the table: each costs its id and a reference to a shared
 * refusal. Past the bounds the connection's oldest refusal, else the oldest of all, is forgotten, which is
 * safe since it changed nothing. `drop` removes a refusal from the daemon's index when it expires or is
 * forgotten.
 */
export class RefusalStore {
  readonly #bounds: RefusalBounds;
  readonly #drop: (entry: Entry) => void;
  /** Retained refusals in settling order; those forgotten early stay until passed over or compacted. */
  readonly #queue = new Queue<Entry>();
  #retained = 0;
  #forgottenInQueue = 0;

  constructor(bounds: RefusalBounds, drop: (entry: Entry) => void) {
    this.#bounds = bounds;
    this.#drop = drop;
  }

  get retained(): number {
    return this.#retained;
  }

  /** Keeps a settled refusal; forgets one first when its connection's share or the store is full. */
  keep(entry: Entry): KeptRefusal {
    const { account } = entry;
    entry.room = 'refusals';
    const ownFull = account.refusals.length >= this.#bounds.connectionRefusals;
    const storeFull = !ownFull && this.#retained >= this.#bounds.refusals;
    const forgotten = ownFull ? this.#forgetOwnOldest(entry) : storeFull ? this.#forgetOldest() : null;
    account.refusals.push(entry);
    this.#queue.push(entry);
    this.#retained++;
    // Only now, with this refusal in, can the forgotten one's connection be let go if it holds nothing.
    if (forgotten) this.#drop(forgotten);
    return { forgotten, ownFull, storeFull };
  }

  /** Drops the refusals retained `retentionMs` or longer; true when any went. */
  expire(now: number, retentionMs: number): boolean {
    let expired = false;
    for (let head = this.#peek(); head && now - head.settledAt >= retentionMs; head = this.#peek()) {
      this.#queue.shift();
      this.#remove(head);
      this.#drop(head);
      expired = true;
    }
    return expired;
  }

  /** When the oldest retained refusal settled, or Infinity. */
  oldestSettledAt(): number {
    return this.#peek()?.settledAt ?? Infinity;
  }

  #peek(): Entry | undefined {
    for (let head = this.#queue.peek(); head; head = this.#queue.peek()) {
      if (head.retained) return head;
      this.#queue.shift();
      this.#forgottenInQueue--;
    }
    return undefined;
  }

  /** The oldest refusal of `entry`'s connection goes; it stays in the queue until passed over. */
  #forgetOwnOldest(entry: Entry): Entry {
    const oldest = entry.account.refusals.peek()!;
    this.#remove(oldest);
    this.#forgottenInQueue++;
    if (this.#forgottenInQueue > this.#retained + 1_024) {
      this.#queue.retain((queued) => queued.retained);
      this.#forgottenInQueue = 0;
    }
    return oldest;
  }

  /** The oldest refusal of all goes, which is also the oldest of its connection. */
  #forgetOldest(): Entry | null {
    const head = this.#peek();
    if (!head) return null;
    this.#queue.shift();
    this.#remove(head);
    return head;
  }

  #remove(entry: Entry): void {
    entry.account.refusals.shift();
    entry.retained = false;
    this.#retained--;
  }
}
