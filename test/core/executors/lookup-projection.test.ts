import t from 'tap';
import type { ExecutorMethodResult } from '../../../core/executors/executor-types.js';
import { projectExecutorResultForLookup } from '../../../core/executors/lookup-projection.js';
import { confirmedExecutor, registryFixture } from './executor-fixture.js';

t.test('each executor result keeps only its acknowledgment metadata', async (t) => {
  const { registry } = registryFixture({
    pendingCalls: () => [
      {
        session_id: 'ses_1',
        turn_id: 'turn_1',
        call_id: 'call_1',
        provider_call_id: 'p1',
        name: 'tool',
        resource_id: 'res_1',
        revision_id: 'rev_1',
        revision_sha256: 'b'.repeat(64),
        status: 'pending',
        wait_kind: 'execution',
        remaining_ms: 5,
      },
    ],
  });
  const created = registry.create('c1');
  const id = created.executor_id;
  const confirmed = registry.confirm('c1', created);
  const rotated = registry.rotate('c1', confirmed);
  const rotateConfirmed = registry.rotateConfirm('c1', {
    ...confirmed,
    resume_secret: rotated.resume_secret,
  });
  const resumed = registry.resume('c2', { executor_id: id, resume_secret: rotated.resume_secret });
  const released = registry.release('c2', resumed);

  t.same(projectExecutorResultForLookup(created), {
    status: 'completed',
    executor_id: id,
    executor_generation: 1,
  });
  t.same(projectExecutorResultForLookup(confirmed), {
    status: 'completed',
    executor_id: id,
    executor_generation: 1,
  });
  t.same(projectExecutorResultForLookup(rotated), {
    status: 'rotation_pending',
    executor_id: id,
    executor_generation: 1,
    pending_timeout_ms: 60_000,
  });
  t.same(projectExecutorResultForLookup(rotateConfirmed), {
    status: 'completed',
    executor_id: id,
    executor_generation: 1,
  });
  t.same(projectExecutorResultForLookup(resumed), {
    status: 'completed',
    executor_id: id,
    executor_generation: 2,
  });
  t.same(projectExecutorResultForLookup(released), {
    status: 'released',
    executor_id: id,
    executor_generation: 2,
  });
});

t.test('members the result does not return are absent, not null', async (t) => {
  const projected = projectExecutorResultForLookup({} as ExecutorMethodResult);
  t.same(projected, { status: 'completed' });
  t.same(Object.keys(projected), ['status']);
});

t.test('unexpected or mistyped members never reach the record', async (t) => {
  const result = {
    executor_id: 7,
    executor_generation: '1',
    pending_timeout_ms: null,
    status: 3,
    resume_secret: 'secret',
    pending_calls: [{ call_id: 'c' }],
    remaining_ms: 9,
  } as unknown as ExecutorMethodResult;
  t.same(projectExecutorResultForLookup(result), { status: 'completed' });
});

t.test('the projection is a copy, unaffected by later changes to the result', async (t) => {
  const { registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  const rotated = registry.rotate('c1', created);
  const projected = projectExecutorResultForLookup(rotated);
  rotated.executor_generation = 99;
  t.equal(projected.executor_generation, 1);
});
