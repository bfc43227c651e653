import FakeTimers from '@sinonjs/fake-timers';
import type { Clock } from '../../core/clock.js';

/** A Clock whose time moves only when the test says so. */
export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void;
}

export function fakeClock(startWall = Date.UTC(2026, 0, 1)): FakeClock {
  const timers = FakeTimers.createClock(startWall);
  const origin = timers.now;
  return {
    now: () => timers.now - origin,
    wallNow: () => timers.now,
    setTimeout(fn, ms) {
      const id = timers.setTimeout(fn, ms);
      return { cancel: () => timers.clearTimeout(id) };
    },
    advance: (ms) => {
      timers.tick(ms);
    },
  };
}
