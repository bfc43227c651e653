import { type BigIntStats, closeSync, constants, fstatSync, lstatSync, openSync, unlinkSync } from 'node:fs';
import { EndpointError } from './endpoint-error.js';
import { nativeAddon } from './native.js';

/** A second daemon found the lifetime lock of this home held. */
export class LockHeldError extends EndpointError {
  constructor() {
    super('lock_held');
    this.name = 'LockHeldError';
  }
}

const LOCK_FILE_MODE = 0o600;
// libuv opens every file O_CLOEXEC, so the lock's open file description never outlives this process
// through a spawned child.
const LOCK_OPEN_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW;

function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

function lstatOrUndefined(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

type Attempt = { locked: number } | { replaced: true };

function openLockFile(path: string): number {
  try {
    return openSync(path, LOCK_OPEN_FLAGS, LOCK_FILE_MODE);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ELOOP') {
      throw new EndpointError('lock_file_unsafe');
    }
    throw error;
  }
}

function isOwnRegularFile(stats: BigIntStats): boolean {
  const uid = process.getuid?.();
  return stats.isFile() && uid !== undefined && stats.uid === BigInt(uid);
}

function attemptLock(path: string): Attempt {
  const fd = openLockFile(path);
  try {
    const opened = fstatSync(fd, { bigint: true });
    if (!isOwnRegularFile(opened)) throw new EndpointError('lock_file_unsafe');
    if (!nativeAddon().flock(fd, true, true)) throw new LockHeldError();
    // The file may have been unlinked or replaced between open and flock: then the lock guards an
    // inode nobody else will ever open, and a second daemon could lock the one now at the path.
    const current = lstatOrUndefined(path);
    if (current === undefined || !sameFile(opened, current)) {
      closeSync(fd);
      return { replaced: true };
    }
    return { locked: fd };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * One daemon per home: an exclusive flock on a lock file, held by keeping its fd open for the life
 * of the process. The kernel drops the lock when the process dies, however it dies, so a stale lock
 * cannot exist. Only its holder ever unlinks the file (`releaseAndRemove`, at a clean stop), and only
 * while it still holds it: an opener that got the inode before the unlink can lock it only after the
 * release, and then finds that the path no longer names it and opens the path again (`acquire`).
 */
export class LifetimeLock {
  readonly path: string;
  #fd: number | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.#fd = fd;
  }

  /** Creates the lock file (mode 0600) when missing and locks it; throws LockHeldError when held. */
  static acquire(path: string): LifetimeLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      const result = attemptLock(path);
      if ('locked' in result) return new LifetimeLock(path, result.locked);
    }
    throw new EndpointError('lock_file_unstable');
  }

  /**
   * True while the lock is held and the file at the path is still the inode this process locked.
   * False once the file was deleted or replaced (another daemon could then lock the new one): the
   * caller must stop serving, without removing the socket.
   */
  isStillOurs(): boolean {
    if (this.#fd === undefined) return false;
    const current = lstatOrUndefined(this.path);
    return current !== undefined && sameFile(fstatSync(this.#fd, { bigint: true }), current);
  }

  /**
   * Unlinks the lock file when it is still the inode this process locked, then releases the lock: for a
   * daemon that stops cleanly and leaves nothing behind. Idempotent; a lock no longer ours is only released.
   */
  releaseAndRemove(): void {
    if (this.isStillOurs()) {
      try {
        unlinkSync(this.path);
      } catch {
        // Gone already, or its folder went read-only: the file stays, which is harmless.
      }
    }
    this.release();
  }

  /** Closes the fd, which drops the lock. Idempotent. */
  release(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }
}
