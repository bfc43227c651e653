import { type ErrorCode, WireError } from '../errors.js';
import type { RecoverySlot } from './operation-entries.js';

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
  /** What one session's recovery methods may hold beyond the table. */
  sessionSlot: Capacity;
  /** What one executor's recovery methods may hold beyond the table. */
  executorSlot: Capacity;
  /** Refusals that changed nothing, kept apart from the table. */
  refusals: number;
  connectionRefusals: number;
  retentionMs: number;
}

/** Who a mutation is charged to, and the recovery slot it has a right to. */
export interface Admission {
  /** The connection that sent it. */
  account: string;
  /**
   * For a method a client recovers with, sent by the right it needs (docs/protocol.md section 6): the
   * session or executor whose slot it may use when the table has no room for it; else null.
   */
  slot: RecoverySlot | null;
}

export const operationRefusals = {
  full: () => new WireError('limit_exceeded', 'too many operations are retained'),
  share: () => new WireError('limit_exceeded', 'this connection retains its share of operations'),
  slot: () => new WireError('limit_exceeded', 'this session or executor retains its room for recovery'),
} as const;

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
  /** The recovery slots holding outcomes, what they hold in all, and how many are at their bound. */
  recovery_slots: { slots: number; retained: number; bytes: number; full: number };
  refusals: { retained: number; bound: number; saturated: boolean };
  /** Connections holding (nearly) the whole of one of their shares. */
  connections_at_share: number;
}
