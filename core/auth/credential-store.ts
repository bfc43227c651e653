import { WireError } from '../errors.js';

/** Where the provider's key comes from: the environment, the stored login, or nowhere. */
export type AuthMethod = 'env' | 'stored';

export interface AuthReadiness {
  ready: boolean;
  method: AuthMethod | null;
}

/** How stored credentials reach the disk; the daemon's are `config/credentials-file.ts`. */
export interface CredentialPersistence {
  write(apiKey: string): Promise<void>;
  remove(): Promise<boolean>;
}

export interface CredentialStoreOptions {
  /** The key of the environment, read once at startup; it wins over a stored key. */
  environmentKey: string | null;
  /** The stored key as read at startup. */
  storedKey: string | null;
  persistence: CredentialPersistence;
}

export const authRefusals = {
  loginInProgress: () => new WireError('configuration_busy', 'another login is in progress'),
} as const;

/**
 * The provider's API key. The stored key is kept in memory once written, so that the provider can ask
 * for the key at every round without touching the disk; a login or logout takes effect for the next
 * round. The key never leaves this object except through `apiKey()`, which only the provider calls.
 */
export class CredentialStore {
  readonly #environmentKey: string | null;
  readonly #persistence: CredentialPersistence;
  #storedKey: string | null;
  #loginInProgress = false;

  constructor(options: CredentialStoreOptions) {
    this.#environmentKey = options.environmentKey;
    this.#storedKey = options.storedKey;
    this.#persistence = options.persistence;
  }

  /** The key for the next provider request: the environment's when set, else the stored one. */
  apiKey(): string | null {
    return this.#environmentKey ?? this.#storedKey;
  }

  readiness(): AuthReadiness {
    const method: AuthMethod | null =
      this.#environmentKey !== null ? 'env' : this.#storedKey !== null ? 'stored' : null;
    return { ready: method !== null, method };
  }

  /**
   * Admits a login flow; refuses a second one while the first has not ended. Returns the end of the
   * flow, which the caller runs once the flow's answer has been written.
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
    await this.#persistence.write(apiKey);
    this.#storedKey = apiKey;
    return this.readiness();
  }

  /** Removes the stored key (never the environment's); `removed` says whether there was one. */
  async logout(): Promise<AuthReadiness & { removed: boolean }> {
    const removed = await this.#persistence.remove();
    const hadKey = this.#storedKey !== null;
    this.#storedKey = null;
    return { removed: removed || hadKey, ...this.readiness() };
  }
}
