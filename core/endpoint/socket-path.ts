/**
 * Naming, guarding and publishing the daemon's Unix socket. The daemon calls these only while it
 * holds the home's LifetimeLock: that lock, not a failed connect, is what makes replacing or
 * removing a socket at the public path safe.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { EndpointError } from './endpoint-error.js';
import { homeId, realHomePath } from './home-identity.js';

/** sun_path holds 108 bytes including the terminating NUL; a longer path is silently truncated. */
export const MAX_SOCKET_PATH_BYTES = 107;

const SOCKET_DIRECTORY_MODE = 0o700;
const SOCKET_MODE = 0o600;
const GROUP_OTHER_BITS = 0o077;

/** The inode a daemon published at the public path; only that inode is ever removed. */
export interface SocketIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

function fitsSocketPath(path: string): boolean {
  return Buffer.byteLength(path, 'utf8') <= MAX_SOCKET_PATH_BYTES;
}

/** Refuses a path the kernel cannot bind as given: relative, containing NUL, or 108 bytes or more. */
export function checkSocketPath(path: string): void {
  if (!isAbsolute(path)) throw new EndpointError('socket_path_not_absolute');
  if (path.includes('\0')) throw new EndpointError('socket_path_has_nul');
  if (!fitsSocketPath(path)) throw new EndpointError('socket_path_too_long');
}

function isErrno(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
}

/**
 * Creates each missing directory down to `dir`, one at a time with its mode set to exactly 0700:
 * the umask could otherwise remove owner bits and leave a parent the next mkdir cannot enter.
 */
function createMissingDirectories(dir: string): void {
  const missing: string[] = [];
  for (let path = resolve(dir); !exists(path); path = dirname(path)) missing.unshift(path);
  for (const path of missing) {
    try {
      mkdirSync(path, SOCKET_DIRECTORY_MODE);
    } catch (error) {
      // Created meanwhile by someone else: it is checked (the last one) like any existing directory.
      if (isErrno(error, 'EEXIST')) continue;
      throw error;
    }
    chmodSync(path, SOCKET_DIRECTORY_MODE);
  }
}

/**
 * Creates the socket directory (recursively, mode 0700) when missing; an existing one must be a real
 * directory (not a symlink) owned by the current user with no group or other permission bits.
 */
export function prepareSocketDirectory(dir: string): void {
  createMissingDirectories(dir);
  const stats = lstatSync(dir);
  const uid = process.getuid?.();
  if (
    !stats.isDirectory() ||
    uid === undefined ||
    stats.uid !== uid ||
    (stats.mode & GROUP_OTHER_BITS) !== 0
  ) {
    throw new EndpointError('socket_directory_unsafe');
  }
}

/**
 * A name beside the public path to bind under, unique per process (pid and random), so a closing
 * server (libuv unlinks its bind name on close) can never remove the public socket.
 */
export function privateBindPath(publicPath: string): string {
  checkSocketPath(publicPath);
  const dir = dirname(publicPath);
  const named = join(dir, `.${basename(publicPath)}.${process.pid}.${randomBytes(4).toString('hex')}`);
  if (fitsSocketPath(named)) return named;
  const short = join(dir, `.${randomBytes(4).toString('hex')}`);
  if (fitsSocketPath(short)) return short;
  throw new EndpointError('private_socket_path_too_long');
}

/**
 * Removes private bind names of `publicPath` left by a daemon killed between bind and publish. Only the
 * holder of the socket path's lock calls it: no live daemon can then be binding for this path. Returns how
 * many it removed.
 */
export function removeStalePrivateSockets(publicPath: string): number {
  const dir = dirname(publicPath);
  const prefix = `.${basename(publicPath)}.`;
  let removed = 0;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !/^\d+\.[0-9a-f]{8}$/.test(name.slice(prefix.length))) continue;
    const path = join(dir, name);
    try {
      if (!lstatSync(path).isSocket()) continue;
      unlinkSync(path);
      removed++;
    } catch (error) {
      if (!isErrno(error, 'ENOENT')) throw error;
    }
  }
  return removed;
}

/**
 * Makes the socket bound at `privatePath` the public one: mode 0600, then rename(2) over the public
 * path, which atomically replaces a stale socket left there. Returns the published inode.
 */
export function publishSocket(privatePath: string, publicPath: string): SocketIdentity {
  chmodSync(privatePath, SOCKET_MODE);
  const stats = lstatSync(privatePath, { bigint: true });
  if (!stats.isSocket()) throw new EndpointError('not_a_socket');
  renameSync(privatePath, publicPath);
  return { dev: stats.dev, ino: stats.ino };
}

/**
 * Removes the public socket only while it is still the inode this daemon published; another
 * daemon's socket at the same name stays. Returns whether it removed it; a missing path is false.
 */
export function unpublishSocket(publicPath: string, identity: SocketIdentity): boolean {
  try {
    if (!samePublished(lstatSync(publicPath, { bigint: true }), identity)) return false;
    unlinkSync(publicPath);
    return true;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false;
    throw error;
  }
}

/** Whether the public path is still the socket this daemon published; false when it is gone or unreadable. */
export function isStillPublished(publicPath: string, identity: SocketIdentity): boolean {
  try {
    return samePublished(lstatSync(publicPath, { bigint: true }), identity);
  } catch {
    return false;
  }
}

function samePublished(stats: { dev: bigint; ino: bigint }, identity: SocketIdentity): boolean {
  return stats.dev === identity.dev && stats.ino === identity.ino;
}

/**
 * Where a home's daemon listens unless told otherwise. With XDG_RUNTIME_DIR an absolute path: the default
 * home (`~/.magi`) at `$XDG_RUNTIME_DIR/magi/magid.sock`, any other home at
 * `$XDG_RUNTIME_DIR/magi/magid-<home id>.sock`, so that each home has its own daemon. Else, or when the
 * result would not fit a socket path, `<home>/run/magid.sock` (which the caller still checks with
 * checkSocketPath).
 */
export function defaultSocketPath(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  userHome: string = homedir(),
): string {
  const runtimeDir = env.XDG_RUNTIME_DIR;
  if (runtimeDir !== undefined && isAbsolute(runtimeDir)) {
    const isDefaultHome = realHomePath(home) === realHomePath(join(userHome, '.magi'));
    const name = isDefaultHome ? 'magid.sock' : `magid-${homeId(home)}.sock`;
    const candidate = join(runtimeDir, 'magi', name);
    if (fitsSocketPath(candidate) && !candidate.includes('\0')) return candidate;
  }
  return join(home, 'run', 'magid.sock');
}
