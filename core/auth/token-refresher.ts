import type { Clock } from '../clock.js';
import type { TokenSet } from './oauth-client.js';

/** An access token is refreshed this long before it expires, so that no request carries one that lapses on the way. */
export const REFRESH_MARGIN_MS = 60_000;

export interface TokenRefresherOptions {
  clock: Clock;
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
}

/**
 * Keeps an OAuth access token fresh for the provider's requests. One refresh at a time: every request that
 * finds the token about to expire while a refresh is running waits for that same refresh. Time is the
 * injected clock's wall time, since the expiry is stored on disk.
 */
export class TokenRefresher {
  readonly #options: TokenRefresherOptions;
  readonly #marginMs: number;
  #running: { of: TokenSet; done: Promise<TokenSet | null> } | null = null;
  #failed = false;

  constructor(options: TokenRefresherOptions) {
    this.#options = options;
    this.#marginMs = options.marginMs ?? REFRESH_MARGIN_MS;
  }

  /** Whether `tokens` should be refreshed before use. */
  due(tokens: TokenSet): boolean {
    return tokens.expiresAt !== null && tokens.expiresAt - this.#marginMs <= this.#options.clock.wallNow();
  }

  /** Whether `tokens` are past their expiry, by the stored time only. */
  expired(tokens: TokenSet): boolean {
    return tokens.expiresAt !== null && tokens.expiresAt <= this.#options.clock.wallNow();
  }

  /** Whether the last refresh failed (cleared by a success, or by `reset()` when the credential changes). */
  get failed(): boolean {
    return this.#failed;
  }

  reset(): void {
    this.#failed = false;
  }

  /**
   * The access token to send: `tokens`' own while it is fresh, else the refreshed one. When the refresh
   * fails, or cannot be done, the old token is sent (the provider's refusal then says so).
   */
  async accessToken(tokens: TokenSet): Promise<string> {
    if (!this.due(tokens) || tokens.refreshToken === null) return tokens.accessToken;
    if (this.#running === null || this.#running.of !== tokens) {
      const done = this.#refresh(tokens);
      const running = { of: tokens, done };
      this.#running = running;
      void done.finally(() => {
        if (this.#running === running) this.#running = null;
      });
    }
    const refreshed = await this.#running.done;
    return refreshed?.accessToken ?? tokens.accessToken;
  }

  async #refresh(tokens: TokenSet): Promise<TokenSet | null> {
    let next: TokenSet;
    try {
      next = await this.#options.refresh(tokens.refreshToken!, this.#options.signal);
    } catch {
      this.#failed = true;
      return null;
    }
    let committed: boolean;
    try {
      committed = await this.#options.commit(tokens, next);
    } catch {
      // Not written: the new tokens are not used either, so that memory and the file never disagree.
      this.#failed = true;
      return null;
    }
    if (committed) this.#failed = false;
    return committed ? next : null;
  }
}
