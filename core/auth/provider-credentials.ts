import { WireError } from '../errors.js';
import type { AuthReadiness, CredentialStore } from './credential-store.js';

export const providerRefusals = {
  unknownProvider: () => new WireError('conflict', 'no provider of that name is configured'),
} as const;

/** One provider's readiness, by name, as `auth.status` and `status` list them. */
export type NamedReadiness = { name: string } & AuthReadiness;

/**
 * Every provider's credential: the `provider` section's (the environment's `MAGI_API_KEY`, a stored key or
 * an OAuth login) and each named provider's (the environment variable it names, or a stored key). The
 * default provider's is the one a request without a provider name means.
 */
export class ProviderCredentials {
  readonly #section: CredentialStore;
  readonly #named: ReadonlyMap<string, CredentialStore>;
  readonly #defaultName: string | null;

  constructor(
    section: CredentialStore,
    named: ReadonlyMap<string, CredentialStore>,
    defaultName: string | null,
  ) {
    this.#section = section;
    this.#named = named;
    this.#defaultName = defaultName;
  }

  /** The `provider` section's credential. */
  get section(): CredentialStore {
    return this.#section;
  }

  /** Whether any named provider is configured. */
  get hasNamed(): boolean {
    return this.#named.size > 0;
  }

  /** The credential of the provider `name`, or of the default provider when none is named. */
  of(name: string | undefined): CredentialStore {
    if (name === undefined)
      return this.#defaultName === null ? this.#section : this.#named.get(this.#defaultName)!;
    const store = this.#named.get(name);
    if (!store) throw providerRefusals.unknownProvider();
    return store;
  }

  /** Each named provider's readiness, in the configuration's order; from memory only. */
  readiness(): NamedReadiness[] {
    return [...this.#named].map(([name, store]) => ({ name, ...store.readiness() }));
  }
}
