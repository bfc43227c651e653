import { join } from 'node:path';
import type { TokenSet } from '../core/auth/oauth-client.js';
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
  const stored = await readStoredCredential(home);
  return stored?.kind === 'api_key' ? stored.apiKey : null;
}

/** What `credentials.json` holds: an API key (`auth.login {method:"api_key"}`) or OAuth tokens. */
export type StoredCredential =
  | { readonly kind: 'api_key'; readonly apiKey: string }
  | { readonly kind: 'oauth'; readonly tokens: TokenSet };

/** The stored credential, or null when there is none or the file cannot be read or understood. */
export async function readStoredCredential(home: string): Promise<StoredCredential | null> {
  try {
    const text = await readTextFile(credentialsPath(home));
    if (text === null) return null;
    const document = JSON.parse(text) as { api_key?: unknown; oauth?: unknown } | null;
    const key = document?.api_key;
    if (typeof key === 'string' && key !== '') return { kind: 'api_key', apiKey: key };
    const tokens = tokenSetOf(document?.oauth);
    return tokens === null ? null : { kind: 'oauth', tokens };
  } catch {
    return null;
  }
}

/** Replaces the stored credential with OAuth tokens, atomically (the old file or the new, never a part). */
export async function writeStoredTokens(home: string, tokens: TokenSet): Promise<void> {
  const oauth = {
    access_token: tokens.accessToken,
    refresh_token: tokens.refreshToken,
    expires_at: tokens.expiresAt,
  };
  await writePrivateFile(credentialsPath(home), `${JSON.stringify({ oauth })}\n`);
}

function tokenSetOf(value: unknown): TokenSet | null {
  if (typeof value !== 'object' || value === null) return null;
  const { access_token, refresh_token, expires_at } = value as Record<string, unknown>;
  if (typeof access_token !== 'string' || access_token === '') return null;
  if (refresh_token !== null && (typeof refresh_token !== 'string' || refresh_token === '')) return null;
  if (expires_at !== null && !Number.isSafeInteger(expires_at)) return null;
  return {
    accessToken: access_token,
    refreshToken: refresh_token as string | null,
    expiresAt: expires_at as number | null,
  };
}

export async function writeStoredApiKey(home: string, apiKey: string): Promise<void> {
  await writePrivateFile(credentialsPath(home), `${JSON.stringify({ api_key: apiKey })}\n`);
}

/** Removes the stored key, and any temporary copy of it a killed write left; returns whether there was a file. */
export async function removeStoredApiKey(home: string): Promise<boolean> {
  await removeStaleTemporaries(home, [CREDENTIALS_FILE_NAME]);
  return removePrivateFile(credentialsPath(home));
}
