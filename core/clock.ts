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
