import { join } from 'node:path';
import { readTextFile, removePrivateFile, writePrivateFile } from './private-file.js';

export const PROVIDER_KEYS_FILE_NAME = 'provider-keys.json';

/**
 * The API keys `auth.login` stored for named providers: `<home>/provider-keys.json`
 * (`{"providers":{"NAME":{"api_key":"…"}}}`, mode 0600), apart from `credentials.json`, which stays the
 * `provider` section's alone. A file that cannot be read or understood holds no key.
 */
export async function readProviderKeys(home: string): Promise<Record<string, string>> {
  try {
    const text = await readTextFile(join(home, PROVIDER_KEYS_FILE_NAME));
    if (text === null) return {};
    const providers = (JSON.parse(text) as { providers?: unknown } | null)?.providers;
    const keys: Record<string, string> = {};
    if (typeof providers !== 'object' || providers === null) return keys;
    for (const [name, entry] of Object.entries(providers)) {
      const key = (entry as { api_key?: unknown } | null)?.api_key;
      if (typeof key === 'string' && key !== '') keys[name] = key;
    }
    return keys;
  } catch {
    return {};
  }
}

/**
 * The file's writer: each change rewrites the whole file atomically (the old file or the new, never a
 * part), one at a time, from the keys in memory; the last key removed removes the file.
 */
export class ProviderKeysFile {
  readonly #path: string;
  readonly #keys: Map<string, string>;
  #writes: Promise<unknown> = Promise.resolve();

  constructor(home: string, keys: Readonly<Record<string, string>>) {
    this.#path = join(home, PROVIDER_KEYS_FILE_NAME);
    this.#keys = new Map(Object.entries(keys));
  }

  write(name: string, apiKey: string): Promise<void> {
    return this.#serial(async () => {
      const next = new Map(this.#keys).set(name, apiKey);
      await this.#save(next);
      this.#keys.set(name, apiKey);
    });
  }

  /** Whether there was a key of `name`. */
  remove(name: string): Promise<boolean> {
    return this.#serial(async () => {
      if (!this.#keys.has(name)) return false;
      const next = new Map(this.#keys);
      next.delete(name);
      await this.#save(next);
      this.#keys.delete(name);
      return true;
    });
  }

  async #save(keys: Map<string, string>): Promise<void> {
    if (keys.size === 0) {
      await removePrivateFile(this.#path);
      return;
    }
    const providers = Object.fromEntries([...keys].map(([name, key]) => [name, { api_key: key }]));
    await writePrivateFile(this.#path, `${JSON.stringify({ providers })}\n`);
  }

  #serial<T>(write: () => Promise<T>): Promise<T> {
    const result = this.#writes.then(write);
    this.#writes = result.catch(() => {});
    return result;
  }
}
