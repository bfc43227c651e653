import { type Clock, type Deadline, deadlineAt, remainingMs } from '../clock.js';
import { type ErrorCode, WireError } from '../errors.js';
import { clearsAt, Saturation, type SaturationListener } from '../saturation.js';
import { Account, Entry, type RecoverySlot, type Refusal, Slot } from './operation-entries.js';
import {
  type Admission,
  type Capacity,
  type OperationBounds,
  type OperationRecord,
  type OperationStats,
  type Outcome,
  operationRefusals,
} from './operation-types.js';
import { Queue } from './queue.js';
import { RefusalStore } from './refusal-store.js';
import { type SplicedJson, Usage } from './retained-json.js';

export { ENTRY_BYTES, type RecoverySlot, type SlotKind } from './operation-entries.js';
export {
  type Admission,
  type Capacity,
  type OperationBounds,
  type OperationRecord,
  type OperationStats,
  type OperationStatus,
  type Outcome,
  operationRefusals,
  type RoomStats,
} from './operation-types.js';
export { SharedJson, SplicedJson } from './retained-json.js';

/** Distinct refusal texts kept once for all the refusals that share them. */
const INTERNED_REFUSALS = 256;

type Share = 'operations' | 'refusals';

/**
 * Operation ids and their outcomes. An id is reserved when its mutation is admitted, reports `accepted`
 * until it settles, and is retained for `retentionMs` after settling; while retained it cannot be used
 * again. The table is bounded by count and by bytes, and each connection's mutations hold at most a share
 * of it; when the table or the share is full a mutation is refused, never by evicting an outcome, unless
 * it is a recovery method sent by right: it then takes room in the slot of its session or executor, which
 * only that right fills. A refusal that changed nothing leaves the table when it settles, for a store of
 * its own (core/operations/refusal-store.ts).
 */
export class OperationLedger {
  readonly #clock: Clock;
  readonly #bounds: OperationBounds;
  readonly #entries = new Map<string, Entry>();
  readonly #accounts = new Map<string, Account>();
  readonly #slots = new Map<string, Slot>();
  readonly #table = new Usage();
  /** What all the slots hold together, for `status`. */
  readonly #slotted = new Usage();
  /** Settled outcomes of the table and the slots, in settling order, which is also expiry order. */
  readonly #settled = new Queue<Entry>();
  readonly #refusals: RefusalStore;
  #accountsAtShare = 0;
  #slotsAtBound = 0;
  readonly #saturations: {
    table: Saturation;
    slot: Saturation;
    refusals: Saturation;
    share: Saturation;
  };
  readonly #methods = new Map<string, string>();
  readonly #refusalTexts = new Map<string, Refusal>();
  /** Armed while a bound is saturated, for the next expiry, so that its clearing is told in time. */
  #wake: Deadline | null = null;

  constructor(options: { clock: Clock; bounds: OperationBounds; saturation?: SaturationListener }) {
    this.#clock = options.clock;
    this.#bounds = options.bounds;
    this.#refusals = new RefusalStore(options.bounds, (entry) => {
      this.#entries.delete(entry.id);
      this.#release(entry.account);
    });
    const listener = options.saturation ?? (() => {});
    this.#saturations = {
      table: new Saturation('operations', listener),
      slot: new Saturation('recovery_slot', listener),
      refusals: new Saturation('refusals', listener),
      share: new Saturation('operation_share', listener),
    };
  }

  /**
   * Reserves a fresh operation id for a mutation that is being admitted, charged to its connection: in
   * the table while the table and the connection's share of it have room, else, for a recovery method
   * sent by right, in its slot; otherwise the mutation is refused and nothing of it is retained.
   */
  begin(operationId: string, method: string, sessionId: string | null, admission: Admission): void {
    this.#expire();
    if (this.#entries.has(operationId)) throw new WireError('operation_already_known');
    const account = this.#account(admission.account);
    const room = this.#roomFor(account, admission.slot);
    this.#armWake();
    if (room instanceof WireError) {
      this.#release(account);
      throw room;
    }
    const entry = new Entry(operationId, this.#interned(method), sessionId, account, room);
    this.#entries.set(operationId, entry);
    this.#charge(entry, 1);
  }

  /** Records an accepted outcome that settles later (a turn): its result is visible, its id stays reserved. */
  accept(operationId: string, result: unknown): void {
    const entry = this.#entries.get(operationId);
    if (!entry || entry.settledAt !== -1) return;
    this.#charge(entry, -1);
    entry.outcome = JSON.stringify(result);
    this.#charge(entry, 1);
  }

  settle(operationId: string, outcome: Outcome): void {
    if (outcome.ok) this.#settle(operationId, () => JSON.stringify(outcome.result));
    else this.#settle(operationId, () => this.#refusal(outcome.error));
  }

  /** Settles a success whose result is already encoded (a response body). */
  settleEncoded(operationId: string, json: string): void {
    this.#settle(operationId, () => json);
  }

  /** Settles a success whose encoded result holds a part shared with other outcomes (a claim's snapshot). */
  settleSpliced(operationId: string, result: SplicedJson): void {
    this.#settle(operationId, () => result);
  }

  lookup(operationId: string): OperationRecord | undefined {
    this.#expire();
    const entry = this.#entries.get(operationId);
    if (!entry) return undefined;
    const { outcome } = entry;
    const refusal = entry.refused ? (outcome as Refusal) : null;
    const json = entry.json;
    return {
      operation_id: entry.id,
      method: entry.method,
      session_id: entry.scope,
      status: entry.settledAt === -1 ? 'accepted' : refusal ? 'failed' : 'completed',
      result: json === null ? null : JSON.parse(json),
      error: refusal ? { code: refusal.code, message: refusal.message } : null,
    };
  }

  /** Operations retained: running, settled, and refusals. */
  get size(): number {
    this.#expire();
    return this.#entries.size;
  }

  stats(): OperationStats {
    this.#expire();
    const { table } = this.#bounds;
    const oldest = this.#settled.peek();
    return {
      operations: {
        retained: this.#table.operations,
        bound: table.operations,
        bytes: this.#table.bytes,
        bytes_bound: table.bytes,
        saturated: this.#saturations.table.saturated,
        frees_in_ms: oldest ? remainingMs(oldest.settledAt + this.#bounds.retentionMs, this.#clock) : null,
      },
      recovery_slots: {
        slots: this.#slots.size,
        retained: this.#slotted.operations,
        bytes: this.#slotted.bytes,
        full: this.#slotsAtBound,
      },
      refusals: {
        retained: this.#refusals.retained,
        bound: this.#bounds.refusals,
        saturated: this.#saturations.refusals.saturated,
      },
      connections_at_share: this.#accountsAtShare,
    };
  }

  /** The slot a mutation takes room in (null: the table), or its refusal. */
  #roomFor(account: Account, right: RecoverySlot | null): Slot | null | WireError {
    const { table, connection } = this.#bounds;
    const tableFull = this.#table.reaches(table);
    const shareFull = !tableFull && account.table.reaches(connection);
    if (!tableFull && !shareFull) return null;
    if (tableFull) this.#saturations.table.reached(this.#tableDetails());
    else this.#shareReached(account, 'operations');
    if (right === null) return tableFull ? operationRefusals.full() : operationRefusals.share();
    const slot = this.#slot(right);
    if (!slot.usage.reaches(this.#slotBound(slot))) return slot;
    this.#slotReached(slot);
    this.#releaseSlot(slot);
    return operationRefusals.slot();
  }

  #settle(operationId: string, outcomeOf: () => string | SplicedJson | Refusal): void {
    const entry = this.#entries.get(operationId);
    if (!entry || entry.settledAt !== -1) return;
    this.#charge(entry, -1);
    entry.outcome = outcomeOf();
    entry.settledAt = this.#clock.now();
    const { slot } = entry;
    // A refusal changed nothing, except one the daemon could not explain (a bug or a failed write).
    if (entry.refused && (entry.outcome as Refusal).code !== 'internal_error') this.#keepRefusal(entry);
    else {
      this.#charge(entry, 1);
      this.#settled.push(entry);
    }
    if (slot) this.#releaseSlot(slot);
    this.#release(entry.account);
    this.#updateSaturations();
    this.#armWake();
  }

  #keepRefusal(entry: Entry): void {
    const { ownFull, storeFull } = this.#refusals.keep(entry);
    if (ownFull) this.#shareReached(entry.account, 'refusals');
    if (storeFull) {
      this.#saturations.refusals.reached({ retained: this.#refusals.retained, bound: this.#bounds.refusals });
    }
  }

  #expire(): void {
    const now = this.#clock.now();
    const retention = this.#bounds.retentionMs;
    let expired = false;
    for (
      let head = this.#settled.peek();
      head && now - head.settledAt >= retention;
      head = this.#settled.peek()
    ) {
      this.#settled.shift();
      this.#entries.delete(head.id);
      head.retained = false;
      this.#charge(head, -1);
      if (head.slot) this.#releaseSlot(head.slot);
      this.#release(head.account);
      expired = true;
    }
    if (this.#refusals.expire(now, retention)) expired = true;
    if (expired) this.#updateSaturations();
  }

  /** Adds (1) or takes off (-1) an entry's charge in its room; a refusal's store counts it alone. */
  #charge(entry: Entry, sign: 1 | -1): void {
    const own = entry.ownBytes;
    const shared = entry.shared;
    if (entry.room === 'table') {
      this.#table.add(sign, own, shared);
      entry.account.table.add(sign, own, shared);
    } else if (entry.room === 'slot') {
      entry.slot!.usage.add(sign, own, shared);
      this.#slotted.add(sign, own, shared);
      entry.account.slotted += sign;
    }
  }

  #account(id: string): Account {
    let account = this.#accounts.get(id);
    if (!account) {
      account = new Account(id);
      this.#accounts.set(id, account);
    }
    return account;
  }

  #slot(right: RecoverySlot): Slot {
    const key = `${right.kind}:${right.id}`;
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = new Slot(key, right);
      this.#slots.set(key, slot);
    }
    return slot;
  }

  #slotBound(slot: Slot): Capacity {
    return slot.kind === 'session' ? this.#bounds.sessionSlot : this.#bounds.executorSlot;
  }

  /** What an account holds fell: it may have left its share, or be gone. */
  #release(account: Account): void {
    if (account.atShare && this.#belowShares(account)) {
      account.atShare = false;
      this.#accountsAtShare--;
    }
    if (account.empty) this.#accounts.delete(account.id);
  }

  /** What a slot holds fell: it may have left its bound, or be gone. */
  #releaseSlot(slot: Slot): void {
    const bound = this.#slotBound(slot);
    const { usage } = slot;
    if (slot.atBound && clearsAt(usage.operations, bound.operations) && clearsAt(usage.bytes, bound.bytes)) {
      slot.atBound = false;
      this.#slotsAtBound--;
    }
    if (usage.operations === 0 && !slot.atBound) this.#slots.delete(slot.key);
  }

  #belowShares(account: Account): boolean {
    const { connection, connectionRefusals } = this.#bounds;
    return (
      clearsAt(account.table.operations, connection.operations) &&
      clearsAt(account.table.bytes, connection.bytes) &&
      clearsAt(account.refusals.length, connectionRefusals)
    );
  }

  #shareReached(account: Account, share: Share): void {
    if (!account.atShare) {
      account.atShare = true;
      this.#accountsAtShare++;
    }
    this.#saturations.share.reached({ connection_id: account.id, share });
    this.#armWake();
  }

  #slotReached(slot: Slot): void {
    if (!slot.atBound) {
      slot.atBound = true;
      this.#slotsAtBound++;
    }
    this.#saturations.slot.reached({ kind: slot.kind, id: slot.id });
  }

  #updateSaturations(): void {
    const { table, slot, refusals, share } = this.#saturations;
    const bound = this.#bounds.table;
    table.update(
      clearsAt(this.#table.operations, bound.operations) && clearsAt(this.#table.bytes, bound.bytes),
      () => this.#tableDetails(),
    );
    slot.update(this.#slotsAtBound === 0, () => ({ full: 0 }));
    refusals.update(clearsAt(this.#refusals.retained, this.#bounds.refusals), () => ({
      retained: this.#refusals.retained,
      bound: this.#bounds.refusals,
    }));
    share.update(this.#accountsAtShare === 0, () => ({ connections_at_share: 0 }));
  }

  #tableDetails(): Record<string, number> {
    const { table } = this.#bounds;
    return {
      retained: this.#table.operations,
      bound: table.operations,
      bytes: this.#table.bytes,
      bytes_bound: table.bytes,
    };
  }

  /** While a bound is saturated, wakes at the next expiry to tell its clearing even if nothing is asked. */
  #armWake(): void {
    if (this.#wake) return;
    const saturated = Object.values(this.#saturations).some((saturation) => saturation.saturated);
    if (!saturated) return;
    const next = Math.min(this.#settled.peek()?.settledAt ?? Infinity, this.#refusals.oldestSettledAt());
    if (next === Infinity) return;
    this.#wake = deadlineAt(this.#clock, next + this.#bounds.retentionMs, () => {
      this.#wake = null;
      this.#expire();
      this.#armWake();
    });
  }

  #interned(method: string): string {
    const known = this.#methods.get(method);
    if (known !== undefined) return known;
    this.#methods.set(method, method);
    return method;
  }

  #refusal(error: { code: ErrorCode; message: string }): Refusal {
    const key = `${error.code}\n${error.message}`;
    const known = this.#refusalTexts.get(key);
    if (known) return known;
    const refusal = Object.freeze({ code: error.code, message: error.message });
    if (this.#refusalTexts.size < INTERNED_REFUSALS) this.#refusalTexts.set(key, refusal);
    return refusal;
  }
}
