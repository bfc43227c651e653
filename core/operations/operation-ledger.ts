import type { Clock } from '../clock.js';
import { type ErrorCode, WireError } from '../errors.js';

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

interface Entry {
  record: OperationRecord;
  settledAt: number | null;
}

/**
 * Operation ids and their outcomes. An id is reserved when its mutation is admitted, reports
 * `accepted` until it settles, and is retained for `retentionMs` after settling; while retained it
 * cannot be used again. The ledger is bounded: when full it refuses, it never evicts.
 */
export class OperationLedger {
  readonly #clock: Clock;
  readonly #capacity: number;
  readonly #retentionMs: number;
  readonly #entries = new Map<string, Entry>();
  /** Settled ids in settling order, which is also expiry order. */
  readonly #settled: string[] = [];
  #settledHead = 0;

  constructor(options: { clock: Clock; capacity: number; retentionMs: number }) {
    this.#clock = options.clock;
    this.#capacity = options.capacity;
    this.#retentionMs = options.retentionMs;
  }

  /** Reserves a fresh operation id for a mutation that is being admitted. */
  begin(operationId: string, method: string, sessionId: string | null): void {
    this.#expire();
    if (this.#entries.has(operationId)) throw new WireError('operation_already_known');
    if (this.#entries.size >= this.#capacity) {
      throw new WireError('limit_exceeded', 'too many operations are retained');
    }
    this.#entries.set(operationId, {
      record: {
        operation_id: operationId,
        method,
        session_id: sessionId,
        status: 'accepted',
        result: null,
        error: null,
      },
      settledAt: null,
    });
  }

  /** Records an accepted outcome that settles later (a turn): its result is visible, its id stays reserved. */
  accept(operationId: string, result: unknown): void {
    const entry = this.#entries.get(operationId);
    if (entry && entry.settledAt === null) entry.record.result = result;
  }

  settle(operationId: string, outcome: Outcome): void {
    const entry = this.#entries.get(operationId);
    if (!entry || entry.settledAt !== null) return;
    entry.record.status = outcome.ok ? 'completed' : 'failed';
    entry.record.result = outcome.ok ? outcome.result : null;
    entry.record.error = outcome.ok ? null : outcome.error;
    entry.settledAt = this.#clock.now();
    this.#settled.push(operationId);
  }

  lookup(operationId: string): OperationRecord | undefined {
    this.#expire();
    return this.#entries.get(operationId)?.record;
  }

  get size(): number {
    this.#expire();
    return this.#entries.size;
  }

  #expire(): void {
    const now = this.#clock.now();
    while (this.#settledHead < this.#settled.length) {
      const id = this.#settled[this.#settledHead]!;
      const entry = this.#entries.get(id);
      if (entry && entry.settledAt !== null && now - entry.settledAt < this.#retentionMs) break;
      this.#entries.delete(id);
      this.#settledHead++;
    }
    if (this.#settledHead > 1024 && this.#settledHead * 2 > this.#settled.length) {
      this.#settled.splice(0, this.#settledHead);
      this.#settledHead = 0;
    }
  }
}
