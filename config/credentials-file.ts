import { join } from 'node:path';
import { readTextFile, removePrivateFile, removeStaleTemporaries, writePrivateFile } from './private-file.js';

export const CREDENTIALS_FILE_NAME = 'credentials.json';

/** Where `auth.login` keeps the API key: `<home>/credentials.json`, mode 0600, in a 0700 home. */
export function credentialsPath(home: string): string {
  return join(home, CREDENTIALS_FILE_NAME);
}

/**
 * The stored API key, or null when there is none. A file that cannot be read or understood holds no key:
 * it is left as it is until the next login replaces it or a logout removes it.
 */
export async function readStoredApiKey(home: string): Promise<string | null> {
  try {
    const text = await readTextFile(credentialsPath(home));
    if (text === null) return null;
    const document: unknown = JSON.parse(text);
    const key = (document as { api_key?: unknown } | null)?.api_key;
    return typeof key === 'string' && key !== '' ? key : null;
  } catch {
    return null;
  }
}

export async function writeStoredApiKey(home: string, apiKey: string): Promise<void> {
  await writePrivateFile(credentialsPath(home), `${JSON.stringify({ api_key: apiKey })}\n`);
}

/** Removes the stored key, and any temporary copy of it a killed write left; returns whether there was a file. */
export async function removeStoredApiKey(home: string): Promise<boolean> {
  await removeStaleTemporaries(home, [CREDENTIALS_FILE_NAME]);
  return removePrivateFile(credentialsPath(home));
}
