/**
 * The one configuration worker: logins, logouts, catalog reads and refreshes, settings reads and writes
 * run one at a time, in arrival order. Each holds the worker until it lets go, which the wire does once
 * the request's answer has been written, so no two of them ever interleave, their outputs included.
 */
export class ConfigurationWorker {
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;
  #held = false;

  /** Resolves once the worker is this caller's, with the function that lets it go (idempotent). */
  async acquire(): Promise<() => void> {
    let letGo: () => void = () => {};
    const released = new Promise<void>((resolve) => (letGo = resolve));
    const previous = this.#tail;
    this.#tail = previous.then(() => released);
    this.#waiting++;
    await previous;
    this.#waiting--;
    this.#held = true;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#held = false;
      letGo();
    };
  }

  /** Whether a request holds the worker or waits for it. */
  get busy(): boolean {
    return this.#held || this.#waiting > 0;
  }
}
