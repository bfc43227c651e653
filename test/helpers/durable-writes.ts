import { WireError } from '../../core/errors.js';
import type { HistoryStore } from '../../core/history/history-store.js';
import type { DurableResult, DurableWrite } from '../../core/history/history-writes.js';

/** The record kind a durable write inserts, or null for a title. */
function kindOf(write: DurableWrite): string | null {
  return write.op === 'setTitle' ? null : write.record.kind;
}

/** Replaces the store's durable write with `replace`, which may call the real one. */
function interpose(
  history: HistoryStore,
  replace: (write: DurableWrite, real: (write: DurableWrite) => Promise<unknown>) => Promise<unknown>,
): void {
  const { writer } = history;
  const real = writer.write.bind(writer) as (write: DurableWrite) => Promise<unknown>;
  writer.write = <W extends DurableWrite>(durable: W): Promise<DurableResult<W>> =>
    replace(durable, real) as Promise<DurableResult<W>>;
}

/** Makes the `ordinal`-th durable write from now on fail, as a full disk would. */
export function failDurableWrite(history: HistoryStore, ordinal: number): void {
  let count = 0;
  interpose(history, (write, real) => {
    count += 1;
    return count === ordinal ? Promise.reject(new WireError('internal_error', 'disk full')) : real(write);
  });
}

/** Makes every durable write of a record of `kind` from now on fail, as a full disk would. */
export function failDurableWritesOf(history: HistoryStore, kind: string): void {
  interpose(history, (write, real) =>
    kindOf(write) === kind ? Promise.reject(new WireError('internal_error', 'disk full')) : real(write),
  );
}

export interface HeldWrite {
  /** Settles once a write of the kind was asked for (and is being held). */
  readonly reached: Promise<void>;
  /** Lets the held write reach the store. */
  release(): void;
}

/**
 * Holds the next durable write of a record of `kind` before it reaches the store, until released: the
 * moment between a record's admission and its commit, made as long as a test needs.
 */
export function holdDurableWrite(history: HistoryStore, kind: string): HeldWrite {
  let reached!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  interpose(history, async (write, real) => {
    if (held || kindOf(write) !== kind) return real(write);
    held = true;
    reached();
    await released;
    return real(write);
  });
  return { reached: arrived, release };
}
