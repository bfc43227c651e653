import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  statSync,
} from 'node:fs';
import { isAbsolute } from 'node:path';
import { WireError } from '../errors.js';
import { type FileState, sameInode } from './file-state.js';

/**
 * The primitives of a walk beneath a held workspace directory, shared by every feature that touches
 * workspace files. Node has no openat, so each component is opened as `/proc/self/fd/<parent fd>/<name>`:
 * the magic link resolves to the directory the daemon holds, whatever was renamed since, and O_NOFOLLOW
 * applies to the name. Callers stay synchronous, because descriptor numbers may be reused between
 * asynchronous steps.
 */

/** Why a walk refused a path; each feature turns it into its own fixed message. */
export type WalkRefusalReason =
  | 'workspace_unavailable'
  | 'excluded_directory'
  | 'not_found'
  | 'symlink'
  | 'not_directory'
  | 'not_regular_file'
  | 'changed'
  | 'unreadable';

export class WalkRefusal extends Error {
  readonly reason: WalkRefusalReason;

  constructor(reason: WalkRefusalReason) {
    super('the workspace walk refused the path');
    this.name = 'WalkRefusal';
    this.reason = reason;
  }
}

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
// libuv adds O_CLOEXEC to every open on Linux, so the flag is not spelled here (Node does not export it).
export const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK keeps a FIFO swapped in after the lstat from blocking the open; O_NOCTTY keeps a terminal from
// becoming the daemon's controlling terminal.
export const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/** Bounds the walk up from the workspace root: PATH_MAX allows no deeper directory. */
const ANCESTORS_MAX = 4_096;

export function beneath(directoryFd: number, name: string): string {
  return `/proc/self/fd/${directoryFd}/${name}`;
}

/** Opens the workspace itself, following symlinks: the user chose it. */
export function openWorkspaceRoot(workspace: string): number {
  if (typeof workspace !== 'string' || !isAbsolute(workspace) || workspace.includes('\0')) {
    throw new WalkRefusal('workspace_unavailable');
  }
  try {
    return openSync(workspace, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    throw refusalForErrno(error, 'workspace_unavailable');
  }
}

/** Without a mounted /proc the walk would silently report files as missing; refuse to run instead. */
export function assertProcFdResolves(directoryFd: number, expected: BigIntStats): void {
  let resolved: BigIntStats;
  try {
    resolved = statSync(`/proc/self/fd/${directoryFd}`, { bigint: true });
  } catch {
    throw new WireError('internal_error');
  }
  if (!sameInode(resolved, expected)) throw new WireError('internal_error');
}

export type Identity = Pick<FileState, 'dev' | 'ino'>;

/** The identities of the daemon's state directories; a missing one is ignored. */
export function excludedIdentities(directories: readonly string[]): Identity[] {
  const identities: Identity[] = [];
  for (const directory of directories) {
    try {
      const { dev, ino } = statSync(directory, { bigint: true });
      identities.push({ dev, ino });
    } catch (error) {
      const code = errnoOf(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new WireError('internal_error');
    }
  }
  return identities;
}

export function isExcluded(stats: Identity, excluded: readonly Identity[]): boolean {
  return excluded.some((identity) => sameInode(identity, stats));
}

/** A workspace at or below daemon state would expose that state; walk `..` up to `/` to find out. */
export function assertNoExcludedAncestor(
  rootFd: number,
  root: BigIntStats,
  excluded: readonly Identity[],
): void {
  if (excluded.length === 0) return;
  let currentFd = rootFd;
  let current: Identity = root;
  try {
    for (let step = 0; step < ANCESTORS_MAX; step += 1) {
      const parentFd = openSync(beneath(currentFd, '..'), O_RDONLY | O_DIRECTORY);
      if (currentFd !== rootFd) closeSync(currentFd);
      currentFd = parentFd;
      const parent = fstatSync(currentFd, { bigint: true });
      if (sameInode(parent, current)) return;
      if (isExcluded(parent, excluded)) throw new WalkRefusal('excluded_directory');
      current = parent;
    }
    throw new WireError('internal_error');
  } catch (error) {
    if (error instanceof WalkRefusal || error instanceof WireError) throw error;
    throw new WireError('internal_error');
  } finally {
    if (currentFd !== rootFd) closeSync(currentFd);
  }
}

export function openDirectoryBeneath(directoryFd: number, name: string): number {
  try {
    return openSync(beneath(directoryFd, name), DIRECTORY_FLAGS);
  } catch (error) {
    const code = errnoOf(error);
    // A symlink opened with O_DIRECTORY|O_NOFOLLOW fails with ENOTDIR, like a file; lstat only picks the message,
    // and an entry that no longer looks like a plain non-directory was most likely a swapped-in symlink.
    if (code === 'ENOTDIR' || code === 'ELOOP') {
      throw new WalkRefusal(isNonDirectoryBeneath(directoryFd, name) ? 'not_directory' : 'symlink');
    }
    throw refusalForErrno(error, 'unreadable');
  }
}

/** Whether the entry is still something other than a symlink or a directory; anything else was a swap. */
function isNonDirectoryBeneath(directoryFd: number, name: string): boolean {
  try {
    const stats = lstatSync(beneath(directoryFd, name));
    return !stats.isSymbolicLink() && !stats.isDirectory();
  } catch {
    return false;
  }
}

/**
 * Opens each of `names` in turn beneath `rootFd` as a directory, never following a symlink, and returns the
 * descriptor of the last one (`rootFd` itself when `names` is empty). `visit` sees each directory once it is
 * open, with its depth (1 for the first name); every descriptor but the returned one and `rootFd` is closed,
 * whatever happens.
 */
export function walkDirectories(
  rootFd: number,
  names: readonly string[],
  visit: (stats: BigIntStats, depth: number) => void,
  openChild: (directoryFd: number, name: string) => number = openDirectoryBeneath,
): number {
  let directoryFd = rootFd;
  try {
    for (const [index, name] of names.entries()) {
      const child = openChild(directoryFd, name);
      if (directoryFd !== rootFd) closeSync(directoryFd);
      directoryFd = child;
      const stats = fstatSync(directoryFd, { bigint: true });
      if (!stats.isDirectory()) throw new WalkRefusal('not_directory');
      visit(stats, index + 1);
    }
  } catch (error) {
    if (directoryFd !== rootFd) closeSync(directoryFd);
    throw error;
  }
  return directoryFd;
}

export function lstatBeneath(path: string, whenMissing: WalkRefusalReason): BigIntStats {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') throw new WalkRefusal(whenMissing);
    throw refusalForErrno(error, 'unreadable');
  }
}

/**
 * Reads until end of file or until the buffer is full, from `position` on (a positioned read) or from the
 * descriptor's current offset when it is null.
 */
export function readAtMost(fd: number, buffer: Buffer, position: number | null = null): number {
  let length = 0;
  try {
    while (length < buffer.length) {
      const at = position === null ? null : position + length;
      const count = readSync(fd, buffer, length, buffer.length - length, at);
      if (count === 0) break;
      length += count;
    }
  } catch (error) {
    throw refusalForErrno(error, 'unreadable');
  }
  return length;
}

/** Maps an errno to a walk refusal; anything that is the daemon's own failure becomes `internal_error`. */
export function refusalForErrno(error: unknown, fallback: 'workspace_unavailable' | 'unreadable'): Error {
  switch (errnoOf(error)) {
    case 'ENOENT':
      return new WalkRefusal(fallback === 'workspace_unavailable' ? fallback : 'not_found');
    case 'ELOOP':
      return new WalkRefusal('symlink');
    case 'ENOTDIR':
      return new WalkRefusal(fallback === 'workspace_unavailable' ? fallback : 'not_directory');
    case 'ENXIO':
    case 'ENODEV':
    case 'EOPNOTSUPP':
      return new WalkRefusal('not_regular_file');
    case 'EACCES':
    case 'EPERM':
    case 'EIO':
    case 'EISDIR':
    case 'ENAMETOOLONG':
      return new WalkRefusal(fallback);
    default:
      return new WireError('internal_error');
  }
}

export function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
