import type { ErrorCode } from '../errors.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { Queue } from './queue.js';
import { type SharedJson, SplicedJson, Usage } from './retained-json.js';

/**
 * What one entry costs beyond its strings: the entry object, its map slot and its place in a queue, as
 * measured on Node 20 (bench/operations.ts prints the measurement). An entry's cost is this plus the
 * UTF-8 bytes of its operation id, its session id and its result as encoded JSON (a shared part counted
 * once per bound).
 */
export const ENTRY_BYTES = 224;

/** Where an entry's room is: the table, its right's recovery slot, or the store of refusals. */
export type Room = 'table' | 'slot' | 'refusals';

export type Refusal = Readonly<{ code: ErrorCode; message: string }>;

/** Whose right a recovery method is sent by: a session's control, or an executor's proof or attachment. */
export type SlotKind = 'session' | 'executor';

export interface RecoverySlot {
  kind: SlotKind;
  id: string;
}

/** The connection a mutation was sent on: what it holds of the table, and its retained refusals. */
export class Account {
  readonly id: string;
  readonly table = new Usage();
  /** Its mutations held in recovery slots; they keep the account while they run. */
  slotted = 0;
  /** Its retained refusals, oldest first. */
  readonly refusals = new Queue<Entry>();
  atShare = false;

  constructor(id: string) {
    this.id = id;
  }

  get empty(): boolean {
    return this.table.operations === 0 && this.slotted === 0 && this.refusals.length === 0;
  }
}

/** The room one session or executor has by right beyond the table. */
export class Slot {
  readonly key: string;
  readonly kind: SlotKind;
  readonly id: string;
  readonly usage = new Usage();
  atBound = false;

  constructor(key: string, slot: RecoverySlot) {
    this.key = key;
    this.kind = slot.kind;
    this.id = slot.id;
  }
}

export class Entry {
  readonly id: string;
  readonly method: string;
  readonly scope: string | null;
  readonly account: Account;
  /** The slot it holds room in, while its room is 'slot'. */
  readonly slot: Slot | null;
  room: Room;
  /** The result as encoded JSON (maybe around a shared part), or the refusal; null while running. */
  outcome: string | SplicedJson | Refusal | null = null;
  /** When it settled; -1 while it runs (an unsettled outcome never expires). */
  settledAt = -1;
  /** False once expired or forgotten: queues pass over it. */
  retained = true;

  constructor(id: string, method: string, scope: string | null, account: Account, slot: Slot | null) {
    this.id = id;
    this.method = method;
    this.scope = scope;
    this.account = account;
    this.slot = slot;
    this.room = slot === null ? 'table' : 'slot';
  }

  get refused(): boolean {
    const { outcome } = this;
    return outcome !== null && typeof outcome === 'object' && !(outcome instanceof SplicedJson);
  }

  /** The encoded result, or null while running without one or when refused. */
  get json(): string | null {
    const { outcome } = this;
    if (typeof outcome === 'string') return outcome;
    return outcome instanceof SplicedJson ? outcome.json : null;
  }

  get shared(): SharedJson | null {
    return this.outcome instanceof SplicedJson ? this.outcome.shared : null;
  }

  /** What it counts on its own: bookkeeping, ids and its result's own bytes. */
  get ownBytes(): number {
    const { outcome } = this;
    const result =
      typeof outcome === 'string'
        ? utf8ByteLength(outcome)
        : outcome instanceof SplicedJson
          ? outcome.ownBytes
          : 0;
    return (
      ENTRY_BYTES + utf8ByteLength(this.id) + (this.scope === null ? 0 : utf8ByteLength(this.scope)) + result
    );
  }
}
