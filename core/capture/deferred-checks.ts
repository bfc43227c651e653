import { closeSync } from 'node:fs';

/**
 * The checks of a capture that wait until its bytes are handed over, kept in the order they were due, with
 * the descriptors they still need. `run()` runs them in that order, stops at the first refusal, and closes
 * every held descriptor whatever happens; it is called exactly once. A refusal of the read itself calls
 * `run()` before it is thrown (`refusalAfterChecks`), so a check that was due earlier still speaks first.
 */
export class DeferredChecks {
  readonly #checks: Array<() => void> = [];
  readonly #descriptors: number[] = [];

  add(check: () => void): void {
    this.#checks.push(check);
  }

  /** Keeps `fd` open until the checks have run, so that no later open reuses its number meanwhile. */
  hold(fd: number): void {
    this.#descriptors.push(fd);
  }

  run(): void {
    try {
      for (const check of this.#checks) check();
    } finally {
      for (const fd of this.#descriptors) closeSync(fd);
    }
  }

  /**
   * For a refusal of the read itself: runs the checks, which throw if one that was due before it refuses
   * first, and otherwise returns `refusal` for the caller to throw.
   */
  refusalAfterChecks(refusal: unknown): unknown {
    this.run();
    return refusal;
  }
}
