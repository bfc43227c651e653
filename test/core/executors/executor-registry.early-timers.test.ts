import t from 'tap';
import { ExecutorRegistry, type ExecutorRemovalReason } from '../../../core/executors/executor-registry.js';
import { PROFILE_LIMITS } from '../../../core/limits.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { outcome } from './executor-fixture.js';

const CONFIRM_MS = PROFILE_LIMITS.executor_confirm_timeout_ms;
const ROTATION_MS = PROFILE_LIMITS.executor_rotation_timeout_ms;
const IDLE_MS = PROFILE_LIMITS.executor_idle_timeout_ms;

/** Every executor deadline against timers that always run a second early: none acts before its time. */
function earlyRegistry() {
  const clock = fakeClock({ earlyMs: 1_000 });
  const removed: Array<{ reason: ExecutorRemovalReason; at: number }> = [];
  const registry = new ExecutorRegistry({
    clock,
    onRemoved: (_id, reason) => removed.push({ reason, at: clock.now() }),
  });
  return { clock, registry, removed };
}

t.test('an unconfirmed executor expires at exactly 60 s when timers run early', async (t) => {
  const { clock, registry, removed } = earlyRegistry();
  registry.create('c1');
  clock.advance(CONFIRM_MS - 1);
  t.same(removed, []);
  clock.advance(1);
  t.same(removed, [{ reason: 'expired', at: CONFIRM_MS }]);
});

t.test('a rotation candidate expires at exactly 60 s when timers run early', async (t) => {
  const { clock, registry } = earlyRegistry();
  const created = registry.create('c1');
  registry.confirm('c1', created);
  const rotated = registry.rotate('c1', created);
  clock.advance(ROTATION_MS - 1);
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...created, resume_secret: rotated.resume_secret })),
    'ok',
    'the candidate still confirms at 59,999 ms',
  );
  const again = registry.rotate('c1', created);
  clock.advance(ROTATION_MS);
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...created, resume_secret: again.resume_secret })),
    'stale_connection',
    'and is gone at 60,000 ms: no candidate is pending',
  );
});

t.test('a detached executor expires at exactly 15 minutes when timers run early', async (t) => {
  const { clock, registry, removed } = earlyRegistry();
  const created = registry.create('c1');
  registry.confirm('c1', created);
  registry.connectionClosed('c1');
  clock.advance(IDLE_MS - 1);
  t.same(removed, []);
  clock.advance(1);
  t.same(removed, [{ reason: 'expired', at: IDLE_MS }]);
});
