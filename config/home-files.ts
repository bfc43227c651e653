import { join } from 'node:path';
import { CREDENTIALS_FILE_NAME } from './credentials-file.js';
import { DAEMON_RECORD_FILE_NAME } from './daemon-record.js';
import { MODEL_CACHE_FILE_NAME } from './model-cache-file.js';
import { removeStaleTemporaries } from './private-file.js';
import { PROVIDER_KEYS_FILE_NAME } from './provider-keys-file.js';
import { SETTINGS_FILE_NAME } from './settings-file.js';

/** The files of the home the daemon itself writes, each atomically through a temporary beside it. */
export const DAEMON_HOME_FILES = [
  CREDENTIALS_FILE_NAME,
  PROVIDER_KEYS_FILE_NAME,
  SETTINGS_FILE_NAME,
  MODEL_CACHE_FILE_NAME,
] as const;

/**
 * At startup, under the home's lock: removes the temporaries of the daemon's own home files that a daemon
 * killed between a write and its rename left behind. Returns how many there were.
 */
export async function removeStaleHomeTemporaries(home: string): Promise<number> {
  // The daemon record's holds nothing secret: swept, but not counted.
  await removeStaleTemporaries(join(home, 'run'), [DAEMON_RECORD_FILE_NAME]);
  return removeStaleTemporaries(home, DAEMON_HOME_FILES);
}
