import { type Clock, type Deadline, deadlineAt, remainingMs } from '../clock.js';
import { type ErrorCode, WireError } from '../errors.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { clearsAt, Saturation, type SaturationListener } from '../saturation.js';
import { Queue } from './queue.js';

export type OperationStatus = 'accepted' | 'completed' | 'failed';

export interface OperationRecord {
  operation_id: string;
  method: string;
  /** The session the envelope named; lookups of a session-scoped operation need its control. */
  session_id: string | null;
  status: OperationStatus;
  result: unknown;
  error: { code: ErrorCode; message: string } | null;
}

export type Outcome =
  | { ok: true; result: unknown }
  | { ok: false; error: { code: ErrorCode; message: string } };

export interface Capacity {
  operations: number;
  bytes: number;
}

export interface OperationBounds {
  /** Mutations running and outcomes retained. */
  table: Capacity;
  /** What one connection's mutations may hold of the table. */
  connection: Capacity;
  /** Room beyond the table that only recovery methods use. */
  reserve: Capacity;
  /** What one connection's recovery methods may hold of the reserve. */
  connectionReserve: Capacity;
  /** Refusals that changed nothing, kept apart from the table. */
  refusals: number;
  connectionRefusals: number;
  retentionMs: number;
}

/** Who a mutation is charged to, and whether it may use the reserve. */
export interface Admission {
  /** The connection that sent it. */
  account: string;
  /** One of the methods a client recovers with (docs/protocol.md section 6). */
  recovery: boolean;
}

/**
 * What one entry costs beyond its strings: the entry object, its map slot and its place in a queue, as
 * measured on Node 20 (bench/operations.ts prints the measurement). An entry's cost is this plus the
 * UTF-8 bytes of its operation id, its session id and its result as encoded JSON.
 */
export const ENTRY_BYTES = 224;

/** Distinct refusal texts kept once for all the refusals that share them. */
const INTERNED_REFUSALS = 256;

const TABLE = 0;
const RESERVE = 1;
const REFUSALS = 2;
type Room = typeof TABLE | typeof RESERVE | typeof REFUSALS;

const SHARE_NAMES = ['operations', 'recovery_reserve', 'refusals'] as const;
type Share = (typeof SHARE_NAMES)[number];

export const operationRefusals = {
  full: () => new WireError('limit_exceeded', 'too many operations are retained'),
  share: () => new WireError('limit_exceeded', 'this connection retains its share of operations'),
} as const;

type Refusal = Readonly<{ code: ErrorCode; message: string }>;

class Usage {
  operations = 0;
  bytes = 0;
}

class Account {
  readonly id: string;
  /** What its entries hold of the table and of the reserve. */
  readonly rooms: readonly [Usage, Usage] = [new Usage(), new Usage()];
  /** Its retained refusals, oldest first. */
  readonly refusals = new Queue<Entry>();
  atShare = false;

  constructor(id: string) {
    this.id = id;
  }

  get empty(): boolean {
    return (
      this.rooms[TABLE].operations === 0 && this.rooms[RESERVE].operations === 0 && this.refusals.length === 0
    );
  }
}

class Entry {
  readonly id: string;
  readonly method: string;
  readonly scope: string | null;
  readonly account: Account;
  room: Room;
  /** The result as encoded JSON, or the refusal; null while running without a result yet. */
  outcome: string | Refusal | null = null;
  /** When it settled; -1 while it runs (an unsettled outcome never expires). */
  settledAt = -1;

  constructor(id: string, method: string, scope: string | null, account: Account, room: Room) {
    this.id = id;
    this.method = method;
    this.scope = scope;
    this.account = account;
    this.room = room;
  }
}

export interface RoomStats {
  retained: number;
  bound: number;
  bytes: number;
  bytes_bound: number;
  saturated: boolean;
}

export interface OperationStats {
  operations: RoomStats & {
    /** Milliseconds until the oldest settled outcome of the table expires; null when none is settled. */
    frees_in_ms: number | null;
  };
  recovery_reserve: RoomStats;
  refusals: { retained: number; bound: number; saturated: boolean };
  /** Connections holding (nearly) the whole of one of their shares. */
  connections_at_share: number;
}

/**
 * Operation ids and their outcomes. An id is reserved when its mutation is admitted, reports `accepted`
 * until it settles, and is retained for `retentionMs` after settling; while retained it cannot be used
 * again. The table is bounded by count and by bytes, and each connection's mutations hold at most a share
 * of it; when the table or the share is full a mutation is refused, never by evicting an outcome, unless
 * it is a recovery method: those use a reserve beyond the table, of which each connection holds at most
 * a share too. A refusal that changed nothing leaves the table when it settles, for a store of its own
 * where it costs its id and a reference to a shared refusal; past that store's bounds the connection's
 * oldest refusal, else the oldest of all, is forgotten, which is safe since it changed nothing.
 */
export class OperationLedger {
  readonly #clock: Clock;
  readonly #bounds: OperationBounds;
  readonly #entries = new Map<string, Entry>();
  readonly #accounts = new Map<string, Account>();
  /** What the table's and the reserve's entries hold. */
  readonly #rooms: readonly [Usage, Usage] = [new Usage(), new Usage()];
  /** Settled outcomes of the table and the reserve, in settling order, which is also expiry order. */
  readonly #settled = new Queue<Entry>();
  /** Retained refusals in settling order; those forgotten early stay until passed over or compacted. */
  readonly #refusals = new Queue<Entry>();
  #retainedRefusals = 0;
  #forgottenInQueue = 0;
  #accountsAtShare = 0;
  readonly #saturations: {
    table: Saturation;
    reserve: Saturation;
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
    const listener = options.saturation ?? (() => {});
    this.#saturations = {
      table: new Saturation('operations', listener),
      reserve: new Saturation('recovery_reserve', listener),
      refusals: new Saturation('refusals', listener),
      share: new Saturation('operation_share', listener),
    };
  }

  /**
   * Reserves a fresh operation id for a mutation that is being admitted, charged to its connection: in
   * the table while the table and the connection's share of it have room, else, for a recovery method,
   * in the reserve; otherwise the mutation is refused and nothing of it is retained.
   */
  begin(operationId: string, method: string, sessionId: string | null, admission: Admission): void {
    this.#expire();
    if (this.#entries.has(operationId)) throw new WireError('operation_already_known');
    const account = this.#account(admission.account);
    const room = this.#roomFor(account, admission.recovery);
    this.#armWake();
    if (room === null) {
      const refusal = this.#refusalOf(account, admission.recovery);
      this.#release(account);
      throw refusal;
    }
    const entry = new Entry(operationId, this.#interned(method), sessionId, account, room);
    this.#entries.set(operationId, entry);
    this.#charge(entry, this.#bytesOf(entry));
  }

  /** Records an accepted outcome that settles later (a turn): its result is visible, its id stays reserved. */
  accept(operationId: string, result: unknown): void {
    const entry = this.#entries.get(operationId);
    if (!entry || entry.settledAt !== -1) return;
    this.#uncharge(entry, this.#bytesOf(entry));
    entry.outcome = JSON.stringify(result);
    this.#charge(entry, this.#bytesOf(entry));
  }

  settle(operationId: string, outcome: Outcome): void {
    if (outcome.ok) this.#settle(operationId, () => JSON.stringify(outcome.result));
    else this.#settle(operationId, () => this.#refusal(outcome.error));
  }

  /** Settles a success whose result is already encoded (a response body). */
  settleEncoded(operationId: string, json: string): void {
    this.#settle(operationId, () => json);
  }

  lookup(operationId: string): OperationRecord | undefined {
    this.#expire();
    const entry = this.#entries.get(operationId);
    if (!entry) return undefined;
    const { outcome } = entry;
    const refused = outcome !== null && typeof outcome === 'object';
    return {
      operation_id: entry.id,
      method: entry.method,
      session_id: entry.scope,
      status: entry.settledAt === -1 ? 'accepted' : refused ? 'failed' : 'completed',
      result: typeof outcome === 'string' ? JSON.parse(outcome) : null,
      error: refused ? { code: outcome.code, message: outcome.message } : null,
    };
  }

  /** Operations retained: running, settled, and refusals. */
  get size(): number {
    this.#expire();
    return this.#entries.size;
  }

  stats(): OperationStats {
    this.#expire();
    const room = (index: typeof TABLE | typeof RESERVE, bound: Capacity, saturation: Saturation) => ({
      retained: this.#rooms[index].operations,
      bound: bound.operations,
      bytes: this.#rooms[index].bytes,
      bytes_bound: bound.bytes,
      saturated: saturation.saturated,
    });
    const oldest = this.#settled.peek();
    return {
      operations: {
        ...room(TABLE, this.#bounds.table, this.#saturations.table),
        frees_in_ms: oldest ? remainingMs(oldest.settledAt + this.#bounds.retentionMs, this.#clock) : null,
      },
      recovery_reserve: room(RESERVE, this.#bounds.reserve, this.#saturations.reserve),
      refusals: {
        retained: this.#retainedRefusals,
        bound: this.#bounds.refusals,
        saturated: this.#saturations.refusals.saturated,
      },
      connections_at_share: this.#accountsAtShare,
    };
  }

  #roomFor(account: Account, recovery: boolean): Room | null {
    const table = this.#fits(TABLE, account);
    if (table === 'fits') return TABLE;
    if (table === 'full') this.#saturations.table.reached(this.#details(TABLE));
    else this.#shareReached(account, 'operations');
    if (!recovery) return null;
    const reserve = this.#fits(RESERVE, account);
    if (reserve === 'fits') return RESERVE;
    if (reserve === 'full') this.#saturations.reserve.reached(this.#details(RESERVE));
    else this.#shareReached(account, 'recovery_reserve');
    return null;
  }

  #fits(room: typeof TABLE | typeof RESERVE, account: Account): 'fits' | 'full' | 'share' {
    const [bound, share] =
      room === TABLE
        ? [this.#bounds.table, this.#bounds.connection]
        : [this.#bounds.reserve, this.#bounds.connectionReserve];
    const used = this.#rooms[room];
    if (used.operations >= bound.operations || used.bytes >= bound.bytes) return 'full';
    const own = account.rooms[room];
    if (own.operations >= share.operations || own.bytes >= share.bytes) return 'share';
    return 'fits';
  }

  #refusalOf(account: Account, recovery: boolean): WireError {
    const room = recovery ? RESERVE : TABLE;
    return this.#fits(room, account) === 'share' ? operationRefusals.share() : operationRefusals.full();
  }

  #settle(operationId: string, outcomeOf: () => string | Refusal): void {
    const entry = this.#entries.get(operationId);
    if (!entry || entry.settledAt !== -1) return;
    this.#uncharge(entry, this.#bytesOf(entry));
    entry.outcome = outcomeOf();
    entry.settledAt = this.#clock.now();
    const { outcome } = entry;
    // A refusal changed nothing, except one the daemon could not explain (a bug or a failed write).
    if (typeof outcome === 'object' && outcome.code !== 'internal_error') this.#keepRefusal(entry);
    else {
      this.#charge(entry, this.#bytesOf(entry));
      this.#settled.push(entry);
    }
    this.#release(entry.account);
    this.#updateSaturations();
    this.#armWake();
  }

  #keepRefusal(entry: Entry): void {
    const { account } = entry;
    entry.room = REFUSALS;
    const ownFull = account.refusals.length >= this.#bounds.connectionRefusals;
    const storeFull = !ownFull && this.#retainedRefusals >= this.#bounds.refusals;
    if (ownFull) this.#forget(account.refusals.peek()!);
    const forgotten = storeFull ? this.#forgetOldestRefusal() : null;
    account.refusals.push(entry);
    this.#refusals.push(entry);
    this.#retainedRefusals++;
    // Only now, with this refusal in, can the forgotten one's connection be let go if it holds nothing.
    if (forgotten) this.#release(forgotten);
    if (ownFull) this.#shareReached(account, 'refusals');
    if (storeFull) {
      this.#saturations.refusals.reached({ retained: this.#retainedRefusals, bound: this.#bounds.refusals });
    }
  }

  /** Drops a retained refusal, the oldest of its connection; it stays in the daemon's queue until passed. */
  #forget(entry: Entry): void {
    entry.account.refusals.shift();
    this.#entries.delete(entry.id);
    this.#retainedRefusals--;
    this.#forgottenInQueue++;
    if (this.#forgottenInQueue > this.#retainedRefusals + 1_024) {
      this.#refusals.retain((queued) => this.#entries.get(queued.id) === queued);
      this.#forgottenInQueue = 0;
    }
  }

  /**
   * Drops the oldest retained refusal of all, which is also the oldest of its connection; returns that
   * connection's account for the caller to release.
   */
  #forgetOldestRefusal(): Account | null {
    for (let head = this.#refusals.shift(); head; head = this.#refusals.shift()) {
      if (this.#entries.get(head.id) !== head) {
        this.#forgottenInQueue--;
        continue;
      }
      this.#removeRefusal(head);
      return head.account;
    }
    return null;
  }

  #removeRefusal(entry: Entry): void {
    entry.account.refusals.shift();
    this.#entries.delete(entry.id);
    this.#retainedRefusals--;
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
      this.#uncharge(head, this.#bytesOf(head));
      this.#release(head.account);
      expired = true;
    }
    for (let head = this.#refusals.peek(); head; head = this.#refusals.peek()) {
      if (this.#entries.get(head.id) !== head) {
        this.#refusals.shift();
        this.#forgottenInQueue--;
        continue;
      }
      if (now - head.settledAt < retention) break;
      this.#refusals.shift();
      this.#removeRefusal(head);
      this.#release(head.account);
      expired = true;
    }
    if (expired) this.#updateSaturations();
  }

  #charge(entry: Entry, bytes: number): void {
    this.#add(entry, 1, bytes);
  }

  /** Takes an entry's charge off; its account is released by the caller once the entry is done with. */
  #uncharge(entry: Entry, bytes: number): void {
    this.#add(entry, -1, -bytes);
  }

  #add(entry: Entry, operations: number, bytes: number): void {
    if (entry.room === REFUSALS) return;
    const room = this.#rooms[entry.room];
    const own = entry.account.rooms[entry.room];
    room.operations += operations;
    room.bytes += bytes;
    own.operations += operations;
    own.bytes += bytes;
  }

  #bytesOf(entry: Entry): number {
    const { outcome } = entry;
    return (
      ENTRY_BYTES +
      utf8ByteLength(entry.id) +
      (entry.scope === null ? 0 : utf8ByteLength(entry.scope)) +
      (typeof outcome === 'string' ? utf8ByteLength(outcome) : 0)
    );
  }

  #account(id: string): Account {
    let account = this.#accounts.get(id);
    if (!account) {
      account = new Account(id);
      this.#accounts.set(id, account);
    }
    return account;
  }

  /** What an account holds fell: it may have left its share, or be gone. */
  #release(account: Account): void {
    if (account.atShare && this.#belowShares(account)) {
      account.atShare = false;
      this.#accountsAtShare--;
    }
    if (account.empty) this.#accounts.delete(account.id);
  }

  #belowShares(account: Account): boolean {
    const { connection, connectionReserve, connectionRefusals } = this.#bounds;
    const [table, reserve] = account.rooms;
    return (
      clearsAt(table.operations, connection.operations) &&
      clearsAt(table.bytes, connection.bytes) &&
      clearsAt(reserve.operations, connectionReserve.operations) &&
      clearsAt(reserve.bytes, connectionReserve.bytes) &&
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

  #updateSaturations(): void {
    const { table, reserve, refusals, share } = this.#saturations;
    const roomCleared = (index: typeof TABLE | typeof RESERVE, bound: Capacity) =>
      clearsAt(this.#rooms[index].operations, bound.operations) &&
      clearsAt(this.#rooms[index].bytes, bound.bytes);
    table.update(roomCleared(TABLE, this.#bounds.table), () => this.#details(TABLE));
    reserve.update(roomCleared(RESERVE, this.#bounds.reserve), () => this.#details(RESERVE));
    refusals.update(clearsAt(this.#retainedRefusals, this.#bounds.refusals), () => ({
      retained: this.#retainedRefusals,
      bound: this.#bounds.refusals,
    }));
    share.update(this.#accountsAtShare === 0, () => ({ connections_at_share: 0 }));
  }

  #details(index: typeof TABLE | typeof RESERVE): Record<string, number> {
    const bound = index === TABLE ? this.#bounds.table : this.#bounds.reserve;
    return {
      retained: this.#rooms[index].operations,
      bound: bound.operations,
      bytes: this.#rooms[index].bytes,
      bytes_bound: bound.bytes,
    };
  }

  /** While a bound is saturated, wakes at the next expiry to tell its clearing even if nothing is asked. */
  #armWake(): void {
    if (this.#wake) return;
    const saturated = Object.values(this.#saturations).some((saturation) => saturation.saturated);
    if (!saturated) return;
    const next = Math.min(this.#settled.peek()?.settledAt ?? Infinity, this.#oldestRefusalSettledAt());
    if (next === Infinity) return;
    this.#wake = deadlineAt(this.#clock, next + this.#bounds.retentionMs, () => {
      this.#wake = null;
      this.#expire();
      this.#armWake();
    });
  }

  #oldestRefusalSettledAt(): number {
    for (let head = this.#refusals.peek(); head; head = this.#refusals.peek()) {
      if (this.#entries.get(head.id) === head) return head.settledAt;
      this.#refusals.shift();
      this.#forgottenInQueue--;
    }
    return Infinity;
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
