import FakeTimers from '@sinonjs/fake-timers';
import type { Clock } from '../../core/clock.js';

/** A Clock whose time moves only when the test says so. */
export interface FakeClock extends Clock {
  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void;
}

export interface FakeClockOptions {
  startWall?: number;
  /**
   * Fires every timer longer than this many milliseconds that much before its deadline, as Node's timers
   * may against the monotonic clock; code that must not act before a deadline has to check the time and
   * wait again (the shorter wait then fires on time).
   */
  earlyMs?: number;
}

export function fakeClock({
  startWall = Date.UTC(2026, 0, 1),
  earlyMs = 0,
}: FakeClockOptions = {}): FakeClock {
  const timers = FakeTimers.createClock(startWall);
  const origin = timers.now;
  return {
    now: () => timers.now - origin,
    wallNow: () => timers.now,
    setTimeout(fn, ms) {
      const id = timers.setTimeout(fn, ms > earlyMs ? ms - earlyMs : ms);
      return { cancel: () => timers.clearTimeout(id) };
    },
    advance: (ms) => {
      timers.tick(ms);
    },
  };
}
