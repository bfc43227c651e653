import type { Clock } from '../clock.js';
import { OAuthFailure, type OAuthFailureCode, type TokenSet } from './oauth-client.js';

/**
 * An access token is refreshed a quarter of its lifetime before it expires, and at most this long before,
 * so that no request carries one that lapses on the way, and a short-lived token is not refreshed before
 * every request.
 */
export const REFRESH_MARGIN_MS = 60_000;
export const REFRESH_MARGIN_FRACTION = 0.25;

/**
 * After a failed refresh, no other is tried before a wait that doubles with each failure in a row, from
 * `base_ms` up to `cap_ms`, less a random part of up to `jitter` of it.
 */
export const REFRESH_BACKOFF = { base_ms: 10_000, cap_ms: 600_000, jitter: 0.5 } as const;

/** The access token has expired and the daemon cannot refresh it now: nothing is sent with it. */
export class CredentialExpired extends Error {
  override readonly name = 'CredentialExpired';

  constructor() {
    super('the provider credential expired and cannot be refreshed');
  }
}

/** One failed refresh, as the log says it: never anything the server sent, nor a token. */
export interface RefreshFailure {
  code: OAuthFailureCode;
  /** Failed refreshes in a row, this one included. */
  failures: number;
  /** How long until the next refresh may be tried. */
  retry_in_ms: number;
}

export interface TokenRefresherOptions {
  clock: Clock;
  /** The most a token is refreshed before its expiry (REFRESH_MARGIN_MS). */
  marginMs?: number;
  /** Asks the authorization server for new tokens. */
  refresh(refreshToken: string, signal: AbortSignal): Promise<TokenSet>;
  /**
   * Makes `next` the credential in place of `previous`; false when `previous` is no longer the credential
   * (a login or logout happened meanwhile, and wins).
   */
  commit(previous: TokenSet, next: TokenSet): Promise<boolean>;
  /** Aborted at shutdown: a refresh in progress gives up. */
  signal: AbortSignal;
  /** Told of each failed refresh. */
  onFailure?: (failure: RefreshFailure) => void;
  /** The jitter's source, in [0, 1). */
  random?: () => number;
}

/**
 * Keeps an OAuth access token fresh for the provider's requests. One refresh at a time: every request that
 * finds the token due while a refresh is running waits for that same refresh. After a failed refresh the
 * next one waits its backoff; meanwhile requests use the access token while it has not expired, and are
 * refused with `CredentialExpired` once it has, rather than sending it. Expiry is the injected clock's wall
 * time, since it is stored on disk; the backoff is its monotonic time.
 */
export class TokenRefresher {
  readonly #options: TokenRefresherOptions;
  readonly #marginMs: number;
  readonly #random: () => number;
  /** Each token set's lifetime, from when the daemon received it (or first saw it, when read at startup). */
  readonly #lifetimes = new WeakMap<TokenSet, number>();
  #running: { of: TokenSet; done: Promise<TokenSet | null> } | null = null;
  #failures = 0;
  #retryAt = -Infinity;
  /** Bumped by `reset()`: a refresh begun before it records nothing of its end. */
  #epoch = 0;

  constructor(options: TokenRefresherOptions) {
    this.#options = options;
    this.#marginMs = options.marginMs ?? REFRESH_MARGIN_MS;
    this.#random = options.random ?? Math.random;
  }

  /** Starts counting `tokens`' lifetime now, when they were just received or read. */
  track(tokens: TokenSet): void {
    if (tokens.expiresAt === null || this.#lifetimes.has(tokens)) return;
    this.#lifetimes.set(tokens, tokens.expiresAt - this.#options.clock.wallNow());
  }

  /** How long before its expiry `tokens` is refreshed. */
  marginMs(tokens: TokenSet): number {
    this.track(tokens);
    const lifetime = this.#lifetimes.get(tokens) ?? 0;
    return Math.max(0, Math.min(this.#marginMs, lifetime * REFRESH_MARGIN_FRACTION));
  }

  /** Whether `tokens` should be refreshed before use. */
  due(tokens: TokenSet): boolean {
    return (
      tokens.expiresAt !== null && tokens.expiresAt - this.marginMs(tokens) <= this.#options.clock.wallNow()
    );
  }

  /** Whether `tokens` are past their expiry, by the stored time only. */
  expired(tokens: TokenSet): boolean {
    return tokens.expiresAt !== null && tokens.expiresAt <= this.#options.clock.wallNow();
  }

  /** Whether the last refresh failed (cleared by a success, or by `reset()` when the credential changes). */
  get failed(): boolean {
    return this.#failures > 0;
  }

  /** The credential changed: its refreshes start afresh, with no backoff. */
  reset(): void {
    this.#failures = 0;
    this.#retryAt = -Infinity;
    this.#epoch++;
  }

  /**
   * The access token to send: `tokens`' own while it is fresh, else the refreshed one. When the refresh
   * fails, cannot be done, or waits its backoff, the old token is sent while it has not expired; once it
   * has, this throws `CredentialExpired`.
   */
  async accessToken(tokens: TokenSet): Promise<string> {
    if (tokens.refreshToken === null || !this.due(tokens)) return this.#usable(tokens);
    if (this.#running === null || this.#running.of !== tokens) {
      if (this.#options.clock.now() < this.#retryAt) return this.#usable(tokens);
      const done = this.#refresh(tokens);
      const running = { of: tokens, done };
      this.#running = running;
      void done.finally(() => {
        if (this.#running === running) this.#running = null;
      });
    }
    const refreshed = await this.#running.done;
    return refreshed?.accessToken ?? this.#usable(tokens);
  }

  #usable(tokens: TokenSet): string {
    if (this.expired(tokens)) throw new CredentialExpired();
    return tokens.accessToken;
  }

  async #refresh(tokens: TokenSet): Promise<TokenSet | null> {
    const epoch = this.#epoch;
    let next: TokenSet;
    try {
      next = await this.#options.refresh(tokens.refreshToken!, this.#options.signal);
    } catch (error) {
      if (!this.#options.signal.aborted && epoch === this.#epoch)
        this.#failed(error instanceof OAuthFailure ? error.code : 'refresh_failed');
      return null;
    }
    this.track(next);
    let committed: boolean;
    try {
      committed = await this.#options.commit(tokens, next);
    } catch {
      // Not written: the new tokens are not used either, so that memory and the file never disagree.
      if (epoch === this.#epoch) this.#failed('storage_failed');
      return null;
    }
    if (!committed) return null;
    this.#failures = 0;
    this.#retryAt = -Infinity;
    return next;
  }

  #failed(code: OAuthFailureCode): void {
    this.#failures++;
    const { base_ms, cap_ms, jitter } = REFRESH_BACKOFF;
    const full = Math.min(cap_ms, base_ms * 2 ** Math.min(this.#failures - 1, 30));
    const wait = Math.round(full * (1 - jitter * this.#random()));
    this.#retryAt = this.#options.clock.now() + wait;
    this.#options.onFailure?.({ code, failures: this.#failures, retry_in_ms: wait });
  }
}
