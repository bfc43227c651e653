import t from 'tap';
import type { Clock } from '../../../core/clock.js';
import { PROFILE_LIMITS } from '../../../core/limits.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { refusalOf, registryFixture, skillResource, toolResource } from './registry-fixture.js';

const IDLE_MS = PROFILE_LIMITS.registry_idle_timeout_ms;

t.test('an unclaimed registry expires exactly 900,000 ms after control ended', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  registry.controlEnded('s1');
  t.equal(registry.stats().idle_registries, 1);
  clock.advance(IDLE_MS - 1);
  t.equal(registry.has('s1'), true, 'alive at 899,999 ms');
  clock.advance(1);
  t.equal(registry.stats().registries, 0, 'gone at 900,000 ms');
  t.equal(registry.stats().retained_bytes, 0, 'and its charge with it');
  t.equal(registry.stats().retained_entries, 0);
});

t.test('a claimed registry never expires; an empty one lives exactly while claimed', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  registry.list('s2');
  clock.advance(IDLE_MS * 10);
  t.equal(registry.has('s1'), true);
  t.equal(registry.has('s2'), true, 'an empty claimed registry remains');
  registry.controlEnded('s2');
  t.equal(registry.has('s2'), false, 'and goes as soon as it is unclaimed');
  t.equal(registry.has('s1'), true);
});

t.test('reclaim resets the timer', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  registry.controlEnded('s1');
  clock.advance(IDLE_MS - 1);
  registry.controlStarted('s1');
  t.equal(registry.stats().idle_registries, 0);
  clock.advance(IDLE_MS * 2);
  t.equal(registry.has('s1'), true, 'no deadline while claimed');
  registry.controlEnded('s1');
  clock.advance(IDLE_MS - 1);
  t.equal(registry.has('s1'), true, 'a full period again');
  clock.advance(1);
  t.equal(registry.has('s1'), false);
});

t.test('a controller request also counts as a claim', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  registry.controlEnded('s1');
  clock.advance(IDLE_MS - 1);
  t.equal(registry.list('s1').entries.length, 1);
  clock.advance(IDLE_MS);
  t.equal(registry.has('s1'), true, 'listing on behalf of the controller reclaimed it');
});

interface StalledClock extends Clock {
  set(ms: number): void;
  /** Every timer scheduled and not cancelled, in order. */
  readonly timers: Array<{ fn: () => void; ms: number }>;
}

/** A clock whose timers run only when the test runs them, so a deadline is reached before anything fires. */
function stalledClock(): StalledClock {
  let now = 0;
  const timers: Array<{ fn: () => void; ms: number }> = [];
  return {
    now: () => now,
    wallNow: () => now,
    setTimeout(fn, ms) {
      const timer = { fn, ms };
      timers.push(timer);
      return { cancel: () => timers.splice(timers.indexOf(timer), 1) };
    },
    set(ms) {
      now = ms;
    },
    timers,
  };
}

t.test('an idle timer that runs early expires nothing and waits again for the remainder', async (t) => {
  const clock = stalledClock();
  const { registry, create } = registryFixture(t, { clock });
  await create('s1', toolResource('a'));
  clock.set(5);
  registry.controlEnded('s1');
  t.same(
    clock.timers.map((timer) => timer.ms),
    [IDLE_MS],
    'one timer, for the full timeout',
  );
  clock.set(IDLE_MS + 1);
  clock.timers.shift()?.fn();
  t.same(
    clock.timers.map((timer) => timer.ms),
    [4],
    'running 4 ms early, it is armed again for exactly the remainder',
  );
  clock.set(IDLE_MS + 5);
  clock.timers.shift()?.fn();
  t.same(clock.timers, [], 'at the deadline it arms nothing more');
  t.equal(registry.stats().registries, 0, 'and has removed the registry');
  t.equal(registry.stats().retained_entries, 0, 'and freed its charge');
});

t.test(
  'with timers that always run early, an idle registry still expires exactly at its deadline',
  async (t) => {
    const clock = fakeClock({ earlyMs: 1_000 });
    const { registry, create } = registryFixture(t, { clock });
    await create('s1', toolResource('a'));
    registry.controlEnded('s1');
    clock.advance(IDLE_MS - 1);
    t.equal(registry.has('s1'), true);
    clock.advance(1);
    t.equal(registry.stats().registries, 0);
  },
);

t.test('an expired registry no longer counts toward the registry cap or the byte budgets', async (t) => {
  const clock = stalledClock();
  const { registry, create } = registryFixture(t, {
    clock,
    limits: { registry_sessions: 2, retained_entries: 2 },
  });
  await create('s1', toolResource('a'));
  await create('s2', toolResource('b'));
  registry.controlEnded('s1');
  clock.set(IDLE_MS);
  // The idle timer of s1 has not run (the clock holds it): only the sweep before each decision removes it.
  t.equal(
    await refusalOf(() => create('s3', toolResource('c'))),
    null,
    'the cap counts live registries only',
  );
  registry.controlEnded('s2');
  clock.set(IDLE_MS * 2);
  t.equal(
    await refusalOf(() => create('s3', toolResource('d'))),
    null,
    'the entry budget counts live revisions only',
  );
});

t.test('at the deadline expiry wins over a new claim, even before the timer runs', async (t) => {
  const clock = stalledClock();
  const { registry, create } = registryFixture(t, { clock });
  await create('s1', toolResource('a'));
  const revision = registry.list('s1').registry_revision;
  registry.controlEnded('s1');
  clock.set(IDLE_MS - 1);
  t.equal(registry.has('s1'), true);
  clock.set(IDLE_MS);
  registry.controlStarted('s1');
  t.equal(registry.has('s1'), false, 'the claim found it expired');
  const fresh = registry.list('s1');
  t.same(fresh.entries, [], 'a new claim starts from an empty registry');
  t.not(fresh.registry_revision, revision);
  t.equal(registry.stats().retained_entries, 0);
});

t.test('at the deadline expiry also wins over a new protection or a controller request', async (t) => {
  const clock = stalledClock();
  const { registry, create } = registryFixture(t, { clock });
  await create('s1', toolResource('a'));
  await create('s2', toolResource('a'));
  registry.controlEnded('s1');
  registry.controlEnded('s2');
  clock.set(IDLE_MS);
  const release = registry.protect('s1');
  t.equal(registry.has('s1'), false);
  release();
  t.equal(registry.snapshot('s2'), null, 'a turn finds no registry');
  t.equal(registry.stats().registries, 0);
});

t.test('turn preparation and accepted work delay the start of the timer', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  const preparation = registry.protect('s1');
  const work = registry.protect('s1');
  registry.controlEnded('s1');
  clock.advance(IDLE_MS * 2);
  t.equal(registry.has('s1'), true, 'protected while unclaimed');
  preparation();
  preparation();
  clock.advance(IDLE_MS * 2);
  t.equal(registry.has('s1'), true, 'one protection still holds; a repeated release changes nothing');
  work();
  t.equal(registry.stats().idle_registries, 1, 'the timer starts when the last protection ends');
  clock.advance(IDLE_MS - 1);
  t.equal(registry.has('s1'), true);
  clock.advance(1);
  t.equal(registry.has('s1'), false);
});

t.test('a protection taken while the timer runs stops it; its release starts a full period', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  registry.controlEnded('s1');
  clock.advance(IDLE_MS - 10);
  const release = registry.protect('s1');
  clock.advance(IDLE_MS);
  t.equal(registry.has('s1'), true);
  release();
  clock.advance(IDLE_MS - 1);
  t.equal(registry.has('s1'), true);
  clock.advance(1);
  t.equal(registry.has('s1'), false);
});

t.test('a protection taken before the registry exists still protects it', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  const release = registry.protect('s1');
  await create('s1', toolResource('a'));
  registry.controlEnded('s1');
  clock.advance(IDLE_MS * 2);
  t.equal(registry.has('s1'), true);
  release();
  t.equal(registry.stats().protected_sessions, 0);
  clock.advance(IDLE_MS);
  t.equal(registry.has('s1'), false);
});

t.test('pins do not protect, but keep their revisions charged past expiry', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', skillResource('style', { content: 'Be brief.' }));
  const pin = registry.snapshot('s1');
  const charged = registry.stats().retained_bytes;
  registry.controlEnded('s1');
  clock.advance(IDLE_MS);
  t.equal(registry.has('s1'), false);
  t.equal(registry.stats().retained_bytes, charged, 'the pinned snapshot keeps its charge');
  t.equal(pin?.snapshot.instructions, 'Be brief.', 'and its content');
  pin?.release();
  t.same(
    [registry.stats().retained_bytes, registry.stats().retained_entries, registry.stats().retained_snapshots],
    [0, 0, 0],
  );
});

t.test('close stops every timer', async (t) => {
  const { registry, clock, create } = registryFixture(t);
  await create('s1', toolResource('a'));
  registry.controlEnded('s1');
  registry.close();
  clock.advance(IDLE_MS * 2);
  t.equal(registry.stats().registries, 1, 'closing cancelled the idle deadline');
});
