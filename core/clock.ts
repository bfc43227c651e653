/**
 * The one source of time for the domain. Every deadline and timer in `core/` reads a Clock, so
 * tests can move time exactly instead of sleeping.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Monotonic milliseconds; only differences are meaningful. */
  now(): number;
  /** Wall-clock milliseconds since the epoch, for timestamps that are shown or stored. */
  wallNow(): number;
  /** Runs `fn` once after `ms`; the timer never keeps the process alive on its own. */
  setTimeout(fn: () => void, ms: number): Timer;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

export interface Deadline {
  /** The monotonic time at which the deadline is reached. */
  readonly at: number;
  cancel(): void;
}

/**
 * Runs `onReached` once `clock.now()` has reached `at`. A timer may run before the monotonic clock reaches
 * its deadline (Node's timers and the monotonic clock round differently); then it is armed again for the
 * remainder, so whatever it triggers always sees the deadline as reached.
 */
export function deadlineAt(clock: Clock, at: number, onReached: () => void): Deadline {
  let timer: Timer;
  const arm = (delay: number): void => {
    timer = clock.setTimeout(() => {
      const remaining = at - clock.now();
      if (remaining > 0) arm(remaining);
      else onReached();
    }, delay);
  };
  arm(Math.max(0, at - clock.now()));
  return { at, cancel: () => timer.cancel() };
}

/** Whole milliseconds from now until `at`, rounded up, never negative. */
export function remainingMs(at: number, clock: Clock): number {
  return Math.max(0, Math.ceil(at - clock.now()));
}
