/**
 * The history store could not be opened or written while the daemon started (a full or read-only disk, a
 * damaged file): the daemon cannot serve. The message names the step and the system's error code only,
 * never a path.
 */
export class HistoryUnavailableError extends Error {
  override readonly name = 'HistoryUnavailableError';
  readonly code: string;

  constructor(step: 'opened' | 'written', cause: unknown) {
    const code = (cause as { code?: unknown } | null)?.code;
    const known = typeof code === 'string' ? code : 'unknown';
    super(`the history store cannot be ${step} (${known})`);
    this.code = known;
  }
}

/** Whether `error` says the disk holding the store is full (SQLite's SQLITE_FULL, or the system's ENOSPC). */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC';
}

/** Whether `error` came from the store's file or its disk, rather than from the daemon's own code. */
export function isStorageFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_') || /^E[A-Z]+$/.test(code));
}
