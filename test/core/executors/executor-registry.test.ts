import t from 'tap';
import { isWireError } from '../../../core/errors.js';
import type { PendingCall } from '../../../core/executors/executor-types.js';
import { isWireId } from '../../../core/ids.js';
import { confirmedExecutor, outcome, registryFixture } from './executor-fixture.js';

const SIXTY_SECONDS = 60_000;
const FIFTEEN_MINUTES = 900_000;
const WRONG_SECRET = 'A'.repeat(43);

t.test('create issues a provisional executor with generation 1 and a 32-byte base64url secret', async (t) => {
  const { registry } = registryFixture();
  const created = registry.create('c1');
  t.same(Object.keys(created).sort(), ['executor_generation', 'executor_id', 'resume_secret']);
  t.equal(created.executor_generation, 1);
  t.ok(isWireId(created.executor_id));
  t.match(created.resume_secret, /^[A-Za-z0-9_-]{43}$/);
  t.equal(Buffer.from(created.resume_secret, 'base64url').length, 32);
  const other = registry.create('c2');
  t.not(other.executor_id, created.executor_id);
  t.not(other.resume_secret, created.resume_secret);
  t.equal(registry.attachedTo('c1'), null, 'a provisional executor is not an attachment');
  t.notOk(registry.isCurrent(created.executor_id, 1, 'c1'));
  t.equal(registry.size, 2);
});

t.test('confirm on the issuing connection just inside 60 s attaches at generation 1', async (t) => {
  const { clock, registry } = registryFixture();
  const created = registry.create('c1');
  clock.advance(SIXTY_SECONDS - 1);
  const confirmed = registry.confirm('c1', created);
  t.same(confirmed, { executor_id: created.executor_id, executor_generation: 1, pending_calls: [] });
  t.same(registry.attachedTo('c1'), { executor_id: created.executor_id, executor_generation: 1 });
  t.ok(registry.isCurrent(created.executor_id, 1, 'c1'));
  t.same(registry.attachmentOf(created.executor_id), { connection_id: 'c1', executor_generation: 1 });
  clock.advance(FIFTEEN_MINUTES * 2);
  t.ok(registry.isCurrent(created.executor_id, 1, 'c1'), 'an attached executor never expires');
});

t.test('at exactly 60 s the unconfirmed executor is gone and its slot is free', async (t) => {
  const { clock, registry, removed } = registryFixture();
  const created = registry.create('c1');
  clock.advance(SIXTY_SECONDS - 1);
  t.same(removed, []);
  clock.advance(1);
  t.same(removed, [{ executorId: created.executor_id, reason: 'expired', at: SIXTY_SECONDS }]);
  t.equal(registry.size, 0);
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c2', created)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.create('c1')),
    'ok',
    'the connection may create again',
  );
});

t.test('expiry at the confirmation deadline wins even before its timer has run', async (t) => {
  let now = 0;
  const scheduled: Array<() => void> = [];
  const clock = {
    now: () => now,
    wallNow: () => now,
    setTimeout: (fn: () => void) => {
      scheduled.push(fn);
      return { cancel() {} };
    },
  };
  const { registry } = registryFixture({ clock });
  const created = registry.create('c1');
  now = SIXTY_SECONDS;
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'unauthorized',
  );
  t.equal(registry.size, 0);
  now = SIXTY_SECONDS - 10;
  const early = registry.create('c2');
  now = SIXTY_SECONDS * 2 - 20;
  scheduled.at(-1)?.();
  t.equal(registry.size, 1, 'a timer running before its deadline re-arms instead of expiring');
  t.equal(scheduled.length, 3);
  now = SIXTY_SECONDS * 2 - 10;
  scheduled.at(-1)?.();
  t.equal(registry.size, 0);
  t.equal(
    outcome(() => registry.confirm('c2', early)),
    'unauthorized',
  );
});

t.test('confirm refuses a wrong secret, an unknown executor and a foreign connection', async (t) => {
  const { registry } = registryFixture();
  const created = registry.create('c1');
  const errors = [
    () => registry.confirm('c1', { executor_id: created.executor_id, resume_secret: WRONG_SECRET }),
    () => registry.confirm('c1', { executor_id: 'exe_unknown', resume_secret: created.resume_secret }),
    () => registry.confirm('c2', { executor_id: created.executor_id, resume_secret: WRONG_SECRET }),
  ].map((action) => {
    try {
      action();
    } catch (error) {
      return isWireError(error) ? error.toJSON() : error;
    }
    return 'ok';
  });
  t.same(errors[0], errors[1], 'a wrong secret and an unknown id are indistinguishable');
  t.same(errors[0], errors[2], 'the proof is checked before the connection');
  t.match(errors[0], { code: 'unauthorized' });
  t.equal(
    outcome(() => registry.confirm('c2', created)),
    'stale_connection',
  );
  const malformed = { executor_id: 42, resume_secret: created.resume_secret } as never;
  t.equal(
    outcome(() => registry.confirm('c1', malformed)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c1', malformed)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'ok',
    'the refusals left it confirmable',
  );
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'stale_connection',
    'a repeated confirm',
  );
});

t.test('a provisional executor outlives its issuing connection only through resume', async (t) => {
  const { clock, registry } = registryFixture();
  const created = registry.create('c1');
  registry.connectionClosed('c1');
  clock.advance(SIXTY_SECONDS - 1);
  t.equal(
    outcome(() => registry.confirm('c2', created)),
    'stale_connection',
  );
  const resumed = registry.resume('c2', created);
  t.same(resumed, { executor_id: created.executor_id, executor_generation: 2, pending_calls: [] });
  t.ok(registry.isCurrent(created.executor_id, 2, 'c2'));
  clock.advance(SIXTY_SECONDS);
  t.equal(registry.size, 1, 'once confirmed, the confirmation deadline no longer applies');
});

t.test('resume confirms a provisional executor from its own connection with a new generation', async (t) => {
  const { registry } = registryFixture();
  const created = registry.create('c1');
  t.equal(registry.resume('c1', created).executor_generation, 2);
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'stale_connection',
  );
  t.ok(registry.isCurrent(created.executor_id, 2, 'c1'));
});

t.test('a provisional executor cannot rotate but its issuer can release it', async (t) => {
  const { registry, removed } = registryFixture();
  const created = registry.create('c1');
  t.equal(
    outcome(() => registry.rotate('c1', created)),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.release('c2', created)),
    'unauthorized',
    'another connection holds no proof',
  );
  t.same(registry.release('c1', created), {
    executor_id: created.executor_id,
    executor_generation: 1,
    status: 'released',
  });
  t.same(
    removed.map((r) => r.reason),
    ['released'],
  );
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'unauthorized',
  );
});

t.test('one executor per connection', async (t) => {
  const { registry } = registryFixture();
  const first = registry.create('c1');
  t.equal(
    outcome(() => registry.create('c1')),
    'conflict',
    'a provisional executor occupies it',
  );
  registry.confirm('c1', first);
  t.equal(
    outcome(() => registry.create('c1')),
    'conflict',
  );
  const second = confirmedExecutor(registry, 'c2');
  t.equal(
    outcome(() => registry.resume('c1', { executor_id: second.executor_id, resume_secret: WRONG_SECRET })),
    'unauthorized',
    'the proof is checked before the connection',
  );
  t.equal(
    outcome(() => registry.resume('c1', second)),
    'conflict',
  );
  t.ok(registry.isCurrent(second.executor_id, 1, 'c2'), 'a refused resume fences nothing');
  registry.release('c1', first);
  t.equal(registry.resume('c1', second).executor_generation, 2);
});

t.test('at most 256 executors, provisional ones included', async (t) => {
  const { clock, registry } = registryFixture();
  const first = registry.create('c0');
  clock.advance(1);
  for (let i = 1; i < 256; i++) registry.create(`c${i}`);
  t.equal(registry.size, 256);
  t.equal(
    outcome(() => registry.create('c256')),
    'limit_exceeded',
  );
  clock.advance(SIXTY_SECONDS - 1);
  t.equal(registry.size, 255, 'the first one expired');
  t.equal(
    outcome(() => registry.confirm('c0', first)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.create('c256')),
    'ok',
  );
  t.equal(
    outcome(() => registry.create('c257')),
    'limit_exceeded',
  );
});

t.test('resume from another connection fences the old one', async (t) => {
  const { registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  const resumed = registry.resume('c2', created);
  t.equal(resumed.executor_generation, 2);
  t.equal(registry.attachedTo('c1'), null);
  t.same(registry.attachedTo('c2'), { executor_id: created.executor_id, executor_generation: 2 });
  t.notOk(registry.isCurrent(created.executor_id, 1, 'c1'));
  t.notOk(registry.isCurrent(created.executor_id, 2, 'c1'));
  t.notOk(registry.isCurrent(created.executor_id, 1, 'c2'));
  t.ok(registry.isCurrent(created.executor_id, 2, 'c2'));
  for (const generation of [1, 2]) {
    const payload = { executor_id: created.executor_id, executor_generation: generation };
    t.equal(
      outcome(() => registry.rotate('c1', payload)),
      'unauthorized',
      'without a secret, the fenced connection holds no proof',
    );
    t.equal(
      outcome(() => registry.release('c1', payload)),
      'unauthorized',
      'without a secret, the fenced connection holds no proof',
    );
    t.equal(
      outcome(() => registry.rotateConfirm('c1', { ...payload, resume_secret: created.resume_secret })),
      'stale_connection',
      'with the current secret it proves authority, from a stale connection',
    );
  }
  t.equal(
    outcome(() => registry.confirm('c1', created)),
    'stale_connection',
  );
  const stalePayload = { executor_id: created.executor_id, executor_generation: 1 };
  t.equal(
    outcome(() => registry.rotate('c2', stalePayload)),
    'stale_connection',
    'an older generation',
  );
  t.equal(
    outcome(() => registry.create('c1')),
    'ok',
    'the fenced connection is free again',
  );
  registry.connectionClosed('c1');
  t.ok(registry.isCurrent(created.executor_id, 2, 'c2'), 'closing a fenced connection detaches nothing');
});

t.test('resume on the attached connection itself moves to a new generation', async (t) => {
  const { registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  t.equal(registry.resume('c1', created).executor_generation, 2);
  t.equal(registry.resume('c1', created).executor_generation, 3);
  t.equal(
    outcome(() => registry.rotate('c1', { ...created, executor_generation: 2 })),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.rotate('c1', { ...created, executor_generation: 3 })),
    'ok',
  );
});

t.test('confirm and resume report bounded pending calls without arguments', async (t) => {
  const calls = Array.from({ length: 40 }, (_, i) => ({
    turn_id: 'turn_1',
    call_id: `call_${i}`,
    session_id: 'ses_1',
    provider_call_id: `p${i}`,
    name: 'lookup_weather',
    resource_id: 'res_1',
    revision_id: 'rev_1',
    revision_sha256: 'a'.repeat(64),
    status: 'pending' as const,
    wait_kind: 'execution' as const,
    remaining_ms: 1_000,
    arguments: { city: 'Oslo' },
  }));
  const asked: string[] = [];
  const { registry } = registryFixture({
    pendingCalls: (executorId) => {
      asked.push(executorId);
      return calls as PendingCall[];
    },
  });
  const created = registry.create('c1');
  const confirmed = registry.confirm('c1', created);
  t.equal(confirmed.pending_calls.length, 32);
  t.same(
    confirmed.pending_calls.map((call) => call.call_id),
    calls.slice(0, 32).map((call) => call.call_id),
  );
  t.notMatch(JSON.stringify(confirmed), /arguments|Oslo/);
  const resumed = registry.resume('c2', created);
  t.equal(resumed.pending_calls.length, 32);
  t.notMatch(JSON.stringify(resumed), /arguments|Oslo/);
  t.same(asked, [created.executor_id, created.executor_id]);
});

t.test('release invalidates the proof and frees the connection', async (t) => {
  const { registry, removed } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  const payload = { executor_id: created.executor_id, executor_generation: 1 };
  t.equal(
    outcome(() => registry.release('c2', payload)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.release('c1', { ...payload, executor_generation: 2 })),
    'stale_connection',
  );
  t.same(registry.release('c1', payload), { ...payload, status: 'released' });
  t.same(
    removed.map((r) => [r.executorId, r.reason]),
    [[created.executor_id, 'released']],
  );
  t.equal(
    outcome(() => registry.resume('c1', created)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.release('c1', payload)),
    'unauthorized',
  );
  t.equal(registry.attachmentOf(created.executor_id), null);
  t.equal(registry.size, 0);
  t.equal(
    outcome(() => registry.create('c1')),
    'ok',
  );
});

t.test('a detached executor can be released only after resume', async (t) => {
  const { registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  registry.connectionClosed('c1');
  t.equal(
    outcome(() => registry.release('c2', created)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.release('c1', created)),
    'unauthorized',
    'nor by the connection it detached from',
  );
  const resumed = registry.resume('c2', created);
  t.equal(
    outcome(() => registry.release('c2', resumed)),
    'ok',
  );
});

t.test('a detached executor expires exactly 15 minutes after disconnect', async (t) => {
  const { clock, registry, removed } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  clock.advance(FIFTEEN_MINUTES);
  t.equal(registry.size, 1, 'time while attached does not count');
  registry.connectionClosed('c1');
  t.equal(registry.attachedTo('c1'), null);
  t.equal(registry.attachmentOf(created.executor_id), null);
  t.notOk(registry.isCurrent(created.executor_id, 1, 'c1'));
  clock.advance(FIFTEEN_MINUTES - 1);
  t.same(removed, []);
  clock.advance(1);
  t.same(removed, [{ executorId: created.executor_id, reason: 'expired', at: FIFTEEN_MINUTES * 2 }]);
  t.equal(
    outcome(() => registry.resume('c2', created)),
    'unauthorized',
  );
});

t.test('resume just before the idle deadline reattaches and stops the timer', async (t) => {
  const { clock, registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  registry.connectionClosed('c1');
  clock.advance(FIFTEEN_MINUTES - 1);
  t.equal(registry.resume('c2', created).executor_generation, 2);
  clock.advance(FIFTEEN_MINUTES * 2);
  t.ok(registry.isCurrent(created.executor_id, 2, 'c2'));
  registry.connectionClosed('c2');
  clock.advance(FIFTEEN_MINUTES - 1);
  t.equal(registry.size, 1, 'a second detach starts a fresh timer');
  clock.advance(1);
  t.equal(registry.size, 0);
});

t.test('a pinned executor does not expire while detached; the timer starts at the last unpin', async (t) => {
  const { clock, registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  t.ok(registry.pin(created.executor_id));
  t.ok(registry.pin(created.executor_id));
  t.notOk(registry.pin('exe_unknown'));
  registry.connectionClosed('c1');
  clock.advance(FIFTEEN_MINUTES * 3);
  registry.unpin(created.executor_id);
  clock.advance(FIFTEEN_MINUTES * 3);
  t.equal(registry.size, 1, 'still pinned once');
  registry.unpin(created.executor_id);
  registry.unpin(created.executor_id);
  clock.advance(FIFTEEN_MINUTES - 1);
  t.equal(registry.size, 1);
  clock.advance(1);
  t.equal(registry.size, 0);
  registry.unpin(created.executor_id);
});

t.test('pinning a detached executor stops its idle timer', async (t) => {
  const { clock, registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  registry.connectionClosed('c1');
  clock.advance(FIFTEEN_MINUTES - 1);
  registry.pin(created.executor_id);
  clock.advance(FIFTEEN_MINUTES * 2);
  t.equal(registry.resume('c2', created).executor_generation, 2);
});

t.test('a pin does not keep a provisional executor beyond its confirmation deadline', async (t) => {
  const { clock, registry } = registryFixture();
  const created = registry.create('c1');
  t.ok(registry.pin(created.executor_id));
  clock.advance(SIXTY_SECONDS);
  t.equal(registry.size, 0);
});

t.test('clear discards every executor and both proofs', async (t) => {
  const { registry, removed } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  const rotated = registry.rotate('c1', created);
  const provisional = registry.create('c2');
  registry.clear();
  t.equal(registry.size, 0);
  t.same(
    removed.map((r) => r.reason),
    ['cleared', 'cleared'],
  );
  t.equal(
    outcome(() => registry.resume('c3', created)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c3', { ...created, resume_secret: rotated.resume_secret })),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c3', provisional)),
    'unauthorized',
  );
  t.equal(registry.attachedTo('c1'), null);
  t.equal(
    outcome(() => registry.create('c1')),
    'ok',
  );
});

t.test('the debug view shows states, never proofs', async (t) => {
  const { registry } = registryFixture();
  const attached = confirmedExecutor(registry, 'c1');
  registry.rotate('c1', attached);
  const provisional = registry.create('c2');
  const detached = confirmedExecutor(registry, 'c3');
  registry.pin(detached.executor_id);
  registry.connectionClosed('c3');
  t.same(registry.toJSON(), {
    executors: [
      {
        executor_id: attached.executor_id,
        executor_generation: 1,
        state: 'attached',
        connection_id: 'c1',
        pins: 0,
        rotation_pending: true,
      },
      {
        executor_id: provisional.executor_id,
        executor_generation: 1,
        state: 'provisional',
        connection_id: 'c2',
        pins: 0,
        rotation_pending: false,
      },
      {
        executor_id: detached.executor_id,
        executor_generation: 1,
        state: 'detached',
        connection_id: null,
        pins: 1,
        rotation_pending: false,
      },
    ],
  });
});

t.test(
  'the right to recover an executor: one of its proofs, or holding it; nothing is refused',
  async (t) => {
    const { clock, registry } = registryFixture();
    const created = registry.create('c1');
    const id = created.executor_id;
    t.ok(registry.proves(id, created.resume_secret), 'its secret while provisional');
    t.ok(registry.isHeldBy(id, 'c1'), 'held by its issuing connection');
    t.notOk(registry.isHeldBy(id, 'c2'));
    registry.confirm('c1', created);
    const rotated = registry.rotate('c1', { executor_id: id, executor_generation: 1 });
    t.ok(registry.proves(id, created.resume_secret), 'the current proof');
    t.ok(registry.proves(id, rotated.resume_secret), 'the candidate');
    t.notOk(registry.proves(id, WRONG_SECRET), 'not a wrong secret');
    t.notOk(registry.proves(id, 42), 'not a secret that is no string');
    t.notOk(registry.proves('exe_unknown', created.resume_secret), 'not for another executor');
    t.notOk(registry.proves(null, created.resume_secret));
    t.same(registry.attachmentOf(id), { connection_id: 'c1', executor_generation: 1 }, 'nothing changed');
    registry.connectionClosed('c1');
    t.notOk(registry.isHeldBy(id, 'c1'), 'a detached executor is held by no one');
    clock.advance(60_000);
    t.notOk(registry.proves(id, rotated.resume_secret), 'an expired candidate proves nothing');
    t.ok(registry.proves(id, created.resume_secret), 'the current proof still does');
  },
);
