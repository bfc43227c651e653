interface QueuedWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupCommitOptions {
  /** Runs `writes` in one transaction and commits it: one durable sync for all of them. */
  transaction: (writes: () => void) => void;
  /** Runs `write` in a nested transaction (a savepoint), so that its failure undoes only itself. */
  savepoint: (write: () => unknown) => unknown;
  /** Defers the commit past the callbacks already due; `setImmediate` outside tests. */
  defer?: (commit: () => void) => void;
}

/**
 * Group commit: every write queued before the event loop next reaches its check phase is committed in one
 * transaction, so concurrent turns share one fsync instead of paying one each. Writes run in the order
 * they were queued, and each one's promise settles only once the transaction holding it is durable; a
 * write that fails undoes only itself and rejects only its own promise.
 */
export class GroupCommit {
  readonly #options: GroupCommitOptions;
  readonly #defer: (commit: () => void) => void;
  #queue: QueuedWrite[] = [];
  #closed = false;

  constructor(options: GroupCommitOptions) {
    this.#options = options;
    this.#defer = options.defer ?? ((commit) => setImmediate(commit));
  }

  /** Queues `write`; resolves with its result once it is committed. */
  enqueue<T>(write: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the store is closed'));
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) this.#defer(() => this.flush());
      this.#queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** Commits everything queued now; the store calls it before closing, so no queued write is lost. */
  flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.#options.transaction(() => {
        for (const { write } of batch) {
          try {
            outcomes.push({ ok: true, value: this.#options.savepoint(write) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    batch.forEach((entry, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) entry.resolve(outcome.value);
      else entry.reject(outcome.error);
    });
  }

  /** Commits what is queued and refuses later writes. */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}
