import { isWireError } from '../../../core/errors.js';
import {
  ExecutorRegistry,
  type ExecutorRegistryOptions,
  type ExecutorRemovalReason,
} from '../../../core/executors/executor-registry.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';

export interface RegistryFixture {
  clock: FakeClock;
  registry: ExecutorRegistry;
  removed: Array<{ executorId: string; reason: ExecutorRemovalReason; at: number }>;
}

export function registryFixture(options: Partial<ExecutorRegistryOptions> = {}): RegistryFixture {
  const clock = fakeClock();
  const removed: RegistryFixture['removed'] = [];
  const registry = new ExecutorRegistry({
    clock,
    onRemoved: (executorId, reason) => removed.push({ executorId, reason, at: clock.now() }),
    ...options,
  });
  return { clock, registry, removed };
}

/** The wire error code a call is refused with, or 'ok' when it succeeds. */
export function outcome(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (isWireError(error)) return error.code;
    throw error;
  }
  return 'ok';
}

/** The wire error a call is refused with, as it travels (code and message), or 'ok' when it succeeds. */
export function refusal(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    if (isWireError(error)) return error.toJSON();
    throw error;
  }
  return 'ok';
}

/** Creates and confirms an executor on `connectionId`, returning its identity and proof. */
export function confirmedExecutor(registry: ExecutorRegistry, connectionId: string) {
  const created = registry.create(connectionId);
  registry.confirm(connectionId, created);
  return created;
}
