import { OPERATION_LIMITS, OPERATION_RETENTION_MS } from '../limits.js';
import type { OperationBounds } from './operation-ledger.js';

/** The operation table's bounds as built (core/limits.ts), read when a daemon is built. */
export function operationBounds(): OperationBounds {
  return {
    table: { operations: OPERATION_LIMITS.table_operations, bytes: OPERATION_LIMITS.table_bytes },
    connection: {
      operations: OPERATION_LIMITS.connection_operations,
      bytes: OPERATION_LIMITS.connection_bytes,
    },
    sessionSlot: {
      operations: OPERATION_LIMITS.session_slot_operations,
      bytes: OPERATION_LIMITS.session_slot_bytes,
    },
    executorSlot: {
      operations: OPERATION_LIMITS.executor_slot_operations,
      bytes: OPERATION_LIMITS.executor_slot_bytes,
    },
    refusals: OPERATION_LIMITS.refusals,
    connectionRefusals: OPERATION_LIMITS.connection_refusals,
    retentionMs: OPERATION_RETENTION_MS,
  };
}
