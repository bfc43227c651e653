import type { Clock } from '../clock.js';
import { WireError } from '../errors.js';
import type { TokenSet } from './oauth-client.js';
import { CredentialExpired, type TokenRefresher } from './token-refresher.js';

/** Where the provider's key comes from: the environment, a stored API key, stored OAuth tokens, or nowhere. */
export type AuthMethod = 'env' | 'stored' | 'oauth';

/**
 * Why stored OAuth tokens cannot be used: the access token has expired and the last refresh failed, or it
 * expired with no way to refresh it.
 */
export type AuthUnreadyReason = 'refresh_failed' | 'token_expired';

export interface AuthReadiness {
  ready: boolean;
  method: AuthMethod | null;
  /** Only when stored OAuth tokens are not usable. */
  reason?: AuthUnreadyReason;
}

/** How stored credentials reach the disk; the daemon's are `config/credentials-file.ts`. */
export interface CredentialPersistence {
  write(apiKey: string): Promise<void>;
  writeTokens(tokens: TokenSet): Promise<void>;
  remove(): Promise<boolean>;
}

export interface CredentialStoreOptions {
  /** The key of the environment, read once at startup; it wins over a stored key. */
  environmentKey: string | null;
  /** The stored key as read at startup. */
  storedKey: string | null;
  /** The stored OAuth tokens as read at startup (a file holds a key or tokens, never both). */
  storedTokens?: TokenSet | null;
  persistence: CredentialPersistence;
  /** Keeps stored OAuth tokens fresh; without one they are used until they expire. */
  refresher?: TokenRefresher;
  /** Tells when stored OAuth tokens have expired when there is no refresher; without it they never do. */
  clock?: Clock;
}

export const authRefusals = {
  loginInProgress: () => new WireError('configuration_busy', 'another login is in progress'),
} as const;

/**
 * The provider's credential. The stored one is kept in memory once written, so that the provider can ask
 * for it at every round without touching the disk; a login or logout takes effect for the next round. Writes
 * and removals of the file run one at a time, so a refresh finishing during a logout never writes the
 * tokens back. The credential never leaves this object except through `token()`, which only the provider
 * calls.
 */
export class CredentialStore {
  readonly #environmentKey: string | null;
  readonly #persistence: CredentialPersistence;
  readonly #refresher: TokenRefresher | null;
  readonly #clock: Clock | null;
  #storedKey: string | null;
  #storedTokens: TokenSet | null;
  #loginInProgress = false;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(options: CredentialStoreOptions) {
    this.#environmentKey = options.environmentKey;
    this.#storedKey = options.storedKey;
    this.#storedTokens = options.storedKey === null ? (options.storedTokens ?? null) : null;
    this.#persistence = options.persistence;
    this.#refresher = options.refresher ?? null;
    this.#clock = options.clock ?? null;
    if (this.#storedTokens) this.#refresher?.track(this.#storedTokens);
  }

  /** The key for the next provider request when no refresh is needed: the environment's, else the stored one. */
  apiKey(): string | null {
    return this.#environmentKey ?? this.#storedKey ?? this.#storedTokens?.accessToken ?? null;
  }

  /**
   * The bearer token for the next provider request, refreshed first when it is about to expire. Throws
   * `CredentialExpired` when stored OAuth tokens have expired and cannot be refreshed now: the request is
   * then not sent.
   */
  async token(): Promise<string | null> {
    if (this.#environmentKey !== null) return this.#environmentKey;
    if (this.#storedKey !== null) return this.#storedKey;
    const tokens = this.#storedTokens;
    if (tokens === null) return null;
    if (this.#refresher) return this.#refresher.accessToken(tokens);
    if (this.#expired(tokens)) throw new CredentialExpired();
    return tokens.accessToken;
  }

  /** From memory and the stored expiry only: never a refresh, a write or the network. */
  readiness(): AuthReadiness {
    if (this.#environmentKey !== null) return { ready: true, method: 'env' };
    if (this.#storedKey !== null) return { ready: true, method: 'stored' };
    const tokens = this.#storedTokens;
    if (tokens === null) return { ready: false, method: null };
    if (!this.#expired(tokens)) return { ready: true, method: 'oauth' };
    if (tokens.refreshToken === null || this.#refresher === null)
      return { ready: false, method: 'oauth', reason: 'token_expired' };
    if (this.#refresher.failed) return { ready: false, method: 'oauth', reason: 'refresh_failed' };
    // Expired, but the next request refreshes it first.
    return { ready: true, method: 'oauth' };
  }

  #expired(tokens: TokenSet): boolean {
    if (this.#refresher) return this.#refresher.expired(tokens);
    return tokens.expiresAt !== null && this.#clock !== null && tokens.expiresAt <= this.#clock.wallNow();
  }

  /**
   * Admits a login flow; refuses a second one while the first has not ended. Returns the end of the
   * flow, which the caller runs once the flow has ended.
   */
  beginLogin(): () => void {
    if (this.#loginInProgress) throw authRefusals.loginInProgress();
    this.#loginInProgress = true;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#loginInProgress = false;
    };
  }

  /** Stores `apiKey` durably, then uses it. */
  async login(apiKey: string): Promise<AuthReadiness> {
    await this.#serial(async () => {
      await this.#persistence.write(apiKey);
      this.#storedKey = apiKey;
      this.#storedTokens = null;
      this.#refresher?.reset();
    });
    return this.readiness();
  }

  /** Stores the tokens of an OAuth login durably, then uses them. */
  async storeTokens(tokens: TokenSet): Promise<AuthReadiness> {
    await this.#serial(async () => {
      await this.#persistence.writeTokens(tokens);
      this.#storedKey = null;
      this.#storedTokens = tokens;
      this.#refresher?.reset();
      this.#refresher?.track(tokens);
    });
    return this.readiness();
  }

  /** Replaces refreshed tokens, unless the credential changed since `previous` was read. */
  replaceTokens(previous: TokenSet, next: TokenSet): Promise<boolean> {
    return this.#serial(async () => {
      if (this.#storedTokens !== previous) return false;
      await this.#persistence.writeTokens(next);
      this.#storedTokens = next;
      return true;
    });
  }

  /** Removes the stored credential (never the environment's); `removed` says whether there was one. */
  async logout(): Promise<AuthReadiness & { removed: boolean }> {
    const removed = await this.#serial(async () => {
      const removedFile = await this.#persistence.remove();
      const hadCredential = this.#storedKey !== null || this.#storedTokens !== null;
      this.#storedKey = null;
      this.#storedTokens = null;
      this.#refresher?.reset();
      return removedFile || hadCredential;
    });
    return { removed, ...this.readiness() };
  }

  #serial<T>(write: () => Promise<T>): Promise<T> {
    const result = this.#writes.then(write);
    this.#writes = result.catch(() => {});
    return result;
  }
}
