import type { OAuthFailureCode } from './oauth-client.js';

/** Where a login ends. */
export type LoginOutcome =
  | { readonly state: 'completed' }
  | { readonly state: 'failed'; readonly code: OAuthFailureCode }
  | { readonly state: 'cancelled' }
  | { readonly state: 'expired' };

export type LoginTerminalState = LoginOutcome['state'];

/**
 * The progress of a login as the requesting connection sees it. `authorization_url` is the only event that
 * carries the URL, and it is never kept anywhere but in this queue until it is sent.
 */
export type LoginProgressEvent =
  | {
      readonly state: 'authorization_url';
      readonly authorization_url: string;
      readonly expires_in_ms: number;
    }
  | { readonly state: 'waiting' }
  | { readonly state: 'exchanging' }
  | LoginOutcome;

export const TERMINAL_STATES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled', 'expired']);

/** Events a login may hold while its acceptance is not yet written: more than a login ever emits. */
export const LOGIN_PROGRESS_CAPACITY = 8;

/**
 * The bounded queue of one login's progress events. Events wait until `open()` (the acceptance has been
 * written, so they follow it), then go to the sink in order. Past the capacity the oldest event that is
 * not the terminal is dropped; after the terminal nothing is taken; a closed queue drops everything.
 */
export class LoginProgress {
  readonly #deliver: (event: LoginProgressEvent) => void;
  readonly #capacity: number;
  readonly #held: LoginProgressEvent[] = [];
  #open = false;
  #closed = false;
  #ended = false;

  constructor(deliver: (event: LoginProgressEvent) => void, capacity = LOGIN_PROGRESS_CAPACITY) {
    this.#deliver = deliver;
    this.#capacity = capacity;
  }

  push(event: LoginProgressEvent): void {
    if (this.#ended || this.#closed) return;
    if (TERMINAL_STATES.has(event.state)) this.#ended = true;
    if (this.#open) {
      this.#deliver(event);
      return;
    }
    if (this.#held.length >= this.#capacity) this.#held.shift();
    this.#held.push(event);
  }

  /** Starts delivering: everything held, in order, then each event as it comes. */
  open(): void {
    if (this.#open || this.#closed) return;
    this.#open = true;
    for (const event of this.#held.splice(0)) this.#deliver(event);
  }

  /** The connection is gone: what is held is dropped, and nothing more is delivered. */
  close(): void {
    this.#closed = true;
    this.#held.length = 0;
  }

  /** How many events wait for `open()`. */
  get held(): number {
    return this.#held.length;
  }
}
