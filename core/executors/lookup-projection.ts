import type { ExecutorMethodResult } from './executor-types.js';

/**
 * What `operation.lookup` may keep of an executor method's result: historical acknowledgment only.
 * Never a secret, pending calls, callback identities, effects or timing.
 */
export interface ExecutorLookupResult {
  status: string;
  executor_id?: string;
  executor_generation?: number;
  pending_timeout_ms?: number;
}

export const DEFAULT_LOOKUP_STATUS = 'completed';

/**
 * Reduces any of the six executor results to its lookup record. Members are copied by name and
 * type, so a result carrying more than its declared shape still cannot leak into the record.
 */
export function projectExecutorResultForLookup(result: ExecutorMethodResult): ExecutorLookupResult {
  const source = result as unknown as Readonly<Record<string, unknown>>;
  const projected: ExecutorLookupResult = {
    status: typeof source.status === 'string' ? source.status : DEFAULT_LOOKUP_STATUS,
  };
  if (typeof source.executor_id === 'string') projected.executor_id = source.executor_id;
  if (typeof source.executor_generation === 'number') {
    projected.executor_generation = source.executor_generation;
  }
  if (typeof source.pending_timeout_ms === 'number') {
    projected.pending_timeout_ms = source.pending_timeout_ms;
  }
  return projected;
}
