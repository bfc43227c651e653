import {
  type ExecutorRecord,
  type ExecutorStore,
  KEPT_TURNS,
  type KeptCall,
  type KeptTurn,
} from './executor-store.js';

/** Who the executor is now, as its record keeps it. */
export interface ExecutorIdentity {
  executor_id: string;
  executor_generation: number;
  resume_secret: string;
  candidate_secret: string | null;
}

/**
 * What an executor keeps in its store for an application that restarts: its identity and proofs, the calls
 * it received that are not settled yet, and the turns started with it. Writes are made one after another,
 * each the whole record as it is then; a failed write is reported, never thrown.
 */
export class ExecutorKeeping {
  /** The calls kept, by call id. */
  readonly calls = new Map<string, KeptCall>();
  #turns: KeptTurn[] = [];
  readonly #store: ExecutorStore | null;
  readonly #instanceId: string;
  readonly #failed: (error: unknown) => void;
  #saving: Promise<void> = Promise.resolve();

  constructor(store: ExecutorStore | null, instanceId: string, failed: (error: unknown) => void) {
    this.#store = store;
    this.#instanceId = instanceId;
    this.#failed = failed;
  }

  /** The turns started with the executor that the store keeps (the newest KEPT_TURNS), oldest first. */
  get turns(): readonly KeptTurn[] {
    return this.#turns;
  }

  /** Takes up what an earlier run of the application kept. */
  restore(record: ExecutorRecord): void {
    this.#turns = [...record.turns];
    for (const call of record.calls) this.calls.set(call.call_id, call);
  }

  keepTurn(sessionId: string, turnId: string): void {
    this.#turns = [...this.#turns, { session_id: sessionId, turn_id: turnId }].slice(-KEPT_TURNS);
  }

  /** Writes the record, after any write still in progress; settles once it is written or failed. */
  write(identity: ExecutorIdentity): Promise<void> {
    return this.#save({
      version: 1,
      instance_id: this.#instanceId,
      ...identity,
      calls: [...this.calls.values()],
      turns: this.#turns,
    });
  }

  /** Forgets everything: the store keeps no record of the executor any more. */
  clear(): Promise<void> {
    this.calls.clear();
    return this.#save(null);
  }

  /** The last write, to wait for. */
  get saving(): Promise<void> {
    return this.#saving;
  }

  #save(record: ExecutorRecord | null): Promise<void> {
    const store = this.#store;
    if (store === null) return Promise.resolve();
    this.#saving = this.#saving.then(() => store.save(record)).catch((error: unknown) => this.#failed(error));
    return this.#saving;
  }
}
