import t from 'tap';
import type { Clock } from '../../../core/clock.js';
import { ApplicationCall } from '../../../core/turns/application-call.js';

/** A clock at fractional milliseconds, as `performance.now()` reads; its timers never fire. */
function fractionalClock(start: number): Clock & { set(now: number): void } {
  let now = start;
  return {
    now: () => now,
    wallNow: () => Date.UTC(2026, 0, 1),
    setTimeout: () => ({ cancel() {} }),
    set: (next) => {
      now = next;
    },
  };
}

function call(): ApplicationCall {
  return new ApplicationCall({
    turnId: 'turn_1',
    sessionId: 'ses_1',
    callId: 'call_1',
    providerCallId: 'c1',
    tool: {
      name: 'lookup',
      resource_id: 'res_1',
      revision_id: 'rev_1',
      revision_sha256: 'a'.repeat(64),
      timeout_ms: 1_000,
    },
    contract: {} as never,
    executor: { executor_id: 'exe_1', executor_generation: 1 },
    arguments: '{}',
  });
}

t.test('remaining time is whole milliseconds, rounded up: a live deadline never reads 0', async (t) => {
  const clock = fractionalClock(10.25);
  const subject = call();
  subject.dispatched(clock, () => {});
  t.equal(subject.remainingMs(clock), 1_000, 'at dispatch');
  for (const [now, expected] of [
    [10.5, 1_000],
    [11.25, 999],
    [511.2, 500],
    [1_009.75, 1],
    [1_010.2, 1],
    [1_010.25, 0],
    [2_000, 0],
  ] as const) {
    clock.set(now);
    const remaining = subject.remainingMs(clock);
    t.equal(remaining, expected, `at ${now} ms`);
    t.ok(Number.isInteger(remaining), 'an integer');
  }
});

t.test('an availability wait reads the same way; a settled call reads null', async (t) => {
  const clock = fractionalClock(0.4);
  const subject = call();
  t.equal(subject.remainingMs(clock), null, 'no deadline yet');
  subject.awaitExecutor(clock, 60_000, () => {});
  clock.set(59_999.9);
  t.equal(subject.remainingMs(clock), 1);
  subject.fail('cancelled');
  t.equal(subject.remainingMs(clock), null);
});
