import type { ProviderFailure } from './provider-error.js';

/**
 * The abort of one provider request: aborted by the caller's signal (`cancelled`) or by the daemon for a
 * reason of its own (a deadline, silence, a refusal), it remembers the first reason, so a failed request
 * reports why it was cut rather than how. `dispose` stops following the caller's signal.
 */
export class RequestAbort {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal;
  readonly #cancel = () => this.abort('cancelled');
  #cause: ProviderFailure | null = null;

  constructor(caller: AbortSignal) {
    this.#caller = caller;
    caller.addEventListener('abort', this.#cancel);
  }

  /** What to pass to the request. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The first reason the request was aborted for, or null while it was not. */
  get cause(): ProviderFailure | null {
    return this.#cause;
  }

  abort(why: ProviderFailure): void {
    this.#cause ??= why;
    this.#controller.abort();
  }

  dispose(): void {
    this.#caller.removeEventListener('abort', this.#cancel);
  }
}
