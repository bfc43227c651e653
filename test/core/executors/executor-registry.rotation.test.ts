import t from 'tap';
import { confirmedExecutor, outcome, registryFixture } from './executor-fixture.js';

const SIXTY_SECONDS = 60_000;
const FIFTEEN_MINUTES = 900_000;

/** An executor confirmed on c1 with a rotation pending: both proofs and the identity. */
function rotating() {
  const fixture = registryFixture();
  const created = confirmedExecutor(fixture.registry, 'c1');
  const rotated = fixture.registry.rotate('c1', created);
  const identity = { executor_id: created.executor_id, executor_generation: 1 };
  const oldProof = { executor_id: created.executor_id, resume_secret: created.resume_secret };
  const newProof = { executor_id: created.executor_id, resume_secret: rotated.resume_secret };
  return { ...fixture, created, rotated, identity, oldProof, newProof };
}

t.test('rotate issues a candidate beside the still valid old proof', async (t) => {
  const { registry, rotated, identity, created, oldProof } = rotating();
  t.same(Object.keys(rotated).sort(), [
    'executor_generation',
    'executor_id',
    'pending_timeout_ms',
    'resume_secret',
    'status',
  ]);
  t.match(rotated, { ...identity, status: 'rotation_pending', pending_timeout_ms: 60_000 });
  t.match(rotated.resume_secret, /^[A-Za-z0-9_-]{43}$/);
  t.not(rotated.resume_secret, created.resume_secret);
  t.ok(registry.isCurrent(identity.executor_id, 1, 'c1'), 'rotation changes no generation');
  t.equal(registry.resume('c2', oldProof).executor_generation, 2, 'the old proof still resumes');
});

t.test('rotate needs the attachment at the current generation', async (t) => {
  const { registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  t.equal(
    outcome(() => registry.rotate('c2', created)),
    'unauthorized',
    'another connection holds no proof',
  );
  t.equal(
    outcome(() => registry.rotate('c1', { ...created, executor_generation: 2 })),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.rotate('c1', { ...created, executor_generation: 0 })),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.rotate('c1', { executor_id: 'exe_unknown', executor_generation: 1 })),
    'unauthorized',
  );
  registry.connectionClosed('c1');
  t.equal(
    outcome(() => registry.rotate('c1', created)),
    'unauthorized',
    'a detached executor is held by no connection',
  );
});

t.test('confirmation promotes the candidate without changing the generation', async (t) => {
  const { registry, identity, oldProof, newProof } = rotating();
  t.same(registry.rotateConfirm('c1', { ...identity, resume_secret: newProof.resume_secret }), identity);
  t.ok(registry.isCurrent(identity.executor_id, 1, 'c1'));
  t.equal(
    outcome(() => registry.resume('c2', oldProof)),
    'unauthorized',
    'the old proof is gone',
  );
  t.equal(registry.resume('c2', newProof).executor_generation, 2);
});

t.test('a repeated confirmation is stale_connection', async (t) => {
  const { registry, identity, newProof } = rotating();
  const confirmation = { ...identity, resume_secret: newProof.resume_secret };
  registry.rotateConfirm('c1', confirmation);
  t.equal(
    outcome(() => registry.rotateConfirm('c1', confirmation)),
    'stale_connection',
  );
  t.ok(registry.isCurrent(identity.executor_id, 1, 'c1'));
});

t.test('confirmation without any rotation is stale_connection', async (t) => {
  const { registry } = registryFixture();
  const created = confirmedExecutor(registry, 'c1');
  t.equal(
    outcome(() => registry.rotateConfirm('c1', created)),
    'stale_connection',
  );
});

t.test('confirmation refuses the old proof or a wrong secret and keeps the candidate', async (t) => {
  const { registry, identity, oldProof, newProof } = rotating();
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...oldProof })),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, resume_secret: 'B'.repeat(43) })),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c2', { ...identity, ...newProof })),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...newProof, executor_generation: 2 })),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...newProof })),
    'ok',
  );
});

t.test('a new rotation replaces the candidate with a fresh 60 s', async (t) => {
  const { clock, registry, identity, oldProof, newProof } = rotating();
  clock.advance(SIXTY_SECONDS - 1);
  const second = registry.rotate('c1', identity);
  const secondProof = { executor_id: identity.executor_id, resume_secret: second.resume_secret };
  t.not(second.resume_secret, newProof.resume_secret);
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...newProof })),
    'unauthorized',
  );
  clock.advance(SIXTY_SECONDS - 1);
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
    'the first candidate is gone',
  );
  t.equal(
    registry.resume('c2', secondProof).executor_generation,
    2,
    'the second is valid to its own deadline',
  );
  t.equal(
    outcome(() => registry.resume('c3', oldProof)),
    'unauthorized',
    'and its promotion ended the old',
  );
});

t.test('resume with the candidate promotes it and fences the old socket', async (t) => {
  const { registry, identity, oldProof, newProof } = rotating();
  const resumed = registry.resume('c2', newProof);
  t.same(resumed, { executor_id: identity.executor_id, executor_generation: 2, pending_calls: [] });
  t.equal(
    outcome(() => registry.rotate('c1', identity)),
    'unauthorized',
    'the fenced connection holds no proof',
  );
  t.equal(
    outcome(() => registry.resume('c3', oldProof)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c2', { ...newProof, executor_generation: 2 })),
    'stale_connection',
    'nothing is pending any more',
  );
  t.equal(registry.resume('c3', newProof).executor_generation, 3);
});

t.test('resume with the old proof cancels the candidate', async (t) => {
  const { registry, identity, oldProof, newProof } = rotating();
  t.equal(registry.resume('c2', oldProof).executor_generation, 2);
  t.equal(
    outcome(() => registry.resume('c3', newProof)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c2', { ...newProof, executor_generation: 2 })),
    'stale_connection',
  );
  t.equal(registry.resume('c1', oldProof).executor_generation, 3);
  t.equal(
    outcome(() => registry.rotate('c2', { ...identity, executor_generation: 2 })),
    'unauthorized',
    'the fenced connection holds no proof',
  );
});

t.test('the candidate is confirmable at 59,999 ms', async (t) => {
  const { clock, registry, identity, newProof } = rotating();
  clock.advance(SIXTY_SECONDS - 1);
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...newProof })),
    'ok',
  );
  clock.advance(1);
  t.equal(registry.resume('c2', newProof).executor_generation, 2, 'a promoted proof does not expire');
});

t.test('at exactly 60 s the candidate expires and the old proof remains', async (t) => {
  const { clock, registry, identity, oldProof, newProof } = rotating();
  clock.advance(SIXTY_SECONDS);
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...newProof })),
    'stale_connection',
  );
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
  );
  t.equal(registry.resume('c2', oldProof).executor_generation, 2);
});

t.test('resume with the candidate at exactly 60 s is refused', async (t) => {
  const { clock, registry, newProof } = rotating();
  clock.advance(SIXTY_SECONDS);
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
  );
  t.ok(registry.isCurrent(newProof.executor_id, 1, 'c1'), 'a refused resume fences nothing');
});

t.test('disconnect does not extend the candidate deadline', async (t) => {
  const early = rotating();
  early.clock.advance(SIXTY_SECONDS / 2);
  early.registry.connectionClosed('c1');
  early.clock.advance(SIXTY_SECONDS / 2 - 1);
  t.equal(early.registry.resume('c2', early.newProof).executor_generation, 2);

  const late = rotating();
  late.clock.advance(SIXTY_SECONDS / 2);
  late.registry.connectionClosed('c1');
  late.clock.advance(SIXTY_SECONDS / 2);
  t.equal(
    outcome(() => late.registry.resume('c2', late.newProof)),
    'unauthorized',
  );
  t.equal(late.registry.resume('c2', late.oldProof).executor_generation, 2);
});

t.test('a detached executor with a pending rotation still expires after 15 minutes', async (t) => {
  const { clock, registry, newProof, oldProof } = rotating();
  registry.connectionClosed('c1');
  clock.advance(FIFTEEN_MINUTES);
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c2', oldProof)),
    'unauthorized',
  );
});

t.test('release discards both proofs', async (t) => {
  const { registry, identity, oldProof, newProof } = rotating();
  t.same(registry.release('c1', identity), { ...identity, status: 'released' });
  t.equal(
    outcome(() => registry.resume('c2', oldProof)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.rotateConfirm('c1', { ...identity, ...newProof })),
    'unauthorized',
  );
});

t.test('restart discards both proofs', async (t) => {
  const { registry, oldProof, newProof } = rotating();
  registry.clear();
  t.equal(
    outcome(() => registry.resume('c2', oldProof)),
    'unauthorized',
  );
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
  );
});

t.test('lost rotate reply, connection kept: rotate again and confirm the new candidate', async (t) => {
  const { registry, identity, newProof: lostProof } = rotating();
  const again = registry.rotate('c1', identity);
  const confirmation = { ...identity, resume_secret: again.resume_secret };
  t.same(registry.rotateConfirm('c1', confirmation), identity);
  t.equal(
    outcome(() => registry.resume('c2', lostProof)),
    'unauthorized',
    'the lost candidate never works',
  );
  t.equal(registry.resume('c2', confirmation).executor_generation, 2);
});

t.test('lost rotate reply, connection lost: resume with the old proof, then rotate again', async (t) => {
  const { registry, oldProof, newProof: lostProof } = rotating();
  registry.connectionClosed('c1');
  const resumed = registry.resume('c2', oldProof);
  t.equal(resumed.executor_generation, 2);
  t.equal(
    outcome(() => registry.resume('c3', lostProof)),
    'unauthorized',
    'resume cancelled the candidate',
  );
  const again = registry.rotate('c2', resumed);
  t.equal(again.executor_generation, 2);
  t.same(registry.rotateConfirm('c2', { ...resumed, resume_secret: again.resume_secret }), {
    executor_id: resumed.executor_id,
    executor_generation: 2,
  });
});

t.test('lost rotate reply at the deadline: the old proof still recovers', async (t) => {
  const { clock, registry, oldProof } = rotating();
  registry.connectionClosed('c1');
  clock.advance(SIXTY_SECONDS);
  t.equal(registry.resume('c2', oldProof).executor_generation, 2);
});

t.test('lost confirmation reply after it was applied: the new proof resumes', async (t) => {
  const { registry, identity, oldProof, newProof } = rotating();
  registry.rotateConfirm('c1', { ...identity, ...newProof });
  registry.connectionClosed('c1');
  t.equal(registry.resume('c2', newProof).executor_generation, 2);
  t.equal(
    outcome(() => registry.resume('c3', oldProof)),
    'unauthorized',
  );
});

t.test('lost confirmation that never arrived, candidate live: the new proof resumes', async (t) => {
  const { clock, registry, oldProof, newProof } = rotating();
  registry.connectionClosed('c1');
  clock.advance(SIXTY_SECONDS - 1);
  t.equal(registry.resume('c2', newProof).executor_generation, 2);
  t.equal(
    outcome(() => registry.resume('c3', oldProof)),
    'unauthorized',
    'resume promoted the candidate',
  );
});

t.test('lost confirmation that never arrived, candidate expired: old-proof recovery', async (t) => {
  const { clock, registry, oldProof, newProof } = rotating();
  registry.connectionClosed('c1');
  clock.advance(SIXTY_SECONDS);
  t.equal(
    outcome(() => registry.resume('c2', newProof)),
    'unauthorized',
    'new-proof resume first fails',
  );
  t.equal(registry.resume('c2', oldProof).executor_generation, 2, 'then the old proof recovers');
});
