import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * A failed read or write of one of the daemon's own files. It names the operation and the system's
 * error code only: never the path, which would show the home in a log.
 */
export class PrivateFileError extends Error {
  override readonly name = 'PrivateFileError';
  readonly code: string;

  constructor(operation: 'read' | 'write' | 'remove', cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'unknown';
    super(
      `a daemon file could not be ${operation === 'read' ? 'read' : operation === 'write' ? 'written' : 'removed'} (${code})`,
    );
    this.code = code;
  }
}

/** Random bytes naming a temporary file; written as twice as many hexadecimal digits. */
const TEMPORARY_ID_BYTES = 6;
const TEMPORARY_NAME = new RegExp(`^\\.(.+)\\.[0-9a-f]{${2 * TEMPORARY_ID_BYTES}}\\.tmp$`);

/**
 * Replaces `path` with `text` atomically: a private temporary file beside it (mode 0600) is written,
 * flushed to disk and renamed into place, so a reader sees the old content or the new, never a part.
 * The directory is created with mode 0700 when missing.
 */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  const directory = dirname(path);
  const temporary = join(
    directory,
    `.${basename(path)}.${randomBytes(TEMPORARY_ID_BYTES).toString('hex')}.tmp`,
  );
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    await syncDirectory(directory);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw new PrivateFileError('write', error);
  }
}

/**
 * Removes the temporary files that writes of the files named `names` in `directory` left behind when the
 * process died between writing and renaming them (a credentials temporary holds the key). Only the holder
 * of the home's lock calls it, so no write of another process is in progress. Returns how many it removed.
 */
export async function removeStaleTemporaries(directory: string, names: readonly string[]): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw new PrivateFileError('read', error);
  }
  const stale = entries.filter((entry) => {
    const name = TEMPORARY_NAME.exec(entry)?.[1];
    return name !== undefined && names.includes(name);
  });
  for (const entry of stale) {
    try {
      await rm(join(directory, entry), { force: true });
    } catch (error) {
      throw new PrivateFileError('remove', error);
    }
  }
  if (stale.length > 0) await syncDirectory(directory);
  return stale.length;
}

/** Removes `path`; returns whether it existed. */
export async function removePrivateFile(path: string): Promise<boolean> {
  try {
    await rm(path);
    await syncDirectory(dirname(path));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new PrivateFileError('remove', error);
  }
}

/** The file's text, or null when it does not exist. */
export async function readTextFile(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new PrivateFileError('read', error);
  }
}

/** Makes a rename or removal in `directory` durable. */
async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
