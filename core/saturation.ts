/** A bound of the daemon's retained state started or stopped refusing; the log carries it. */
export interface SaturationEvent {
  /** Which bound, as `status` names it. */
  bound: string;
  saturated: boolean;
  /** Counts, and the connection concerned by a share: never a token, a path or anything a client sent. */
  details: Record<string, number | string>;
}

export type SaturationListener = (event: SaturationEvent) => void;

/**
 * A saturated bound clears once what it holds has fallen to this fraction of it, not at the first room
 * it has again: a bound that keeps refusing at its edge is then told once, not once per refusal.
 */
export const CLEARS_AT_FRACTION = 0.75;

/** Whether `used` of `bound` is low enough for a saturated bound to clear. */
export function clearsAt(used: number, bound: number): boolean {
  return used <= bound * CLEARS_AT_FRACTION;
}

/**
 * One bound's saturation: told once when it first refuses (or forgets), and once when it has cleared.
 */
export class Saturation {
  readonly #bound: string;
  readonly #listener: SaturationListener;
  #saturated = false;

  constructor(bound: string, listener: SaturationListener) {
    this.#bound = bound;
    this.#listener = listener;
  }

  get saturated(): boolean {
    return this.#saturated;
  }

  /** The bound refused (or forgot) something. */
  reached(details: Record<string, number | string>): void {
    if (this.#saturated) return;
    this.#saturated = true;
    this.#listener({ bound: this.#bound, saturated: true, details });
  }

  /** What the bound holds changed; `cleared` says whether it is low enough now. */
  update(cleared: boolean, details: () => Record<string, number | string>): void {
    if (!this.#saturated || !cleared) return;
    this.#saturated = false;
    this.#listener({ bound: this.#bound, saturated: false, details: details() });
  }
}
