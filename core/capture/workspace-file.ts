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
import { PROFILE_LIMITS } from '../limits.js';
import { isCredentialLikePath } from './credential-paths.js';
import { DeferredChecks } from './deferred-checks.js';
import { type FileState, sameFileState, sameInode } from './file-state.js';
import { type CaptureRefusal, captureRefusal } from './refusals.js';
import { parseRelativePath } from './relative-path.js';

/**
 * Test seam only: callbacks at the exact points where a hostile writer could swap a file, so tests can
 * prove each swap is refused or harmless. Production callers pass nothing.
 */
export interface CaptureHooks {
  /** After the directory at `depth` is opened and checked (0 is the workspace root, k the k-th component). */
  afterDirectoryOpen?(depth: number): void;
  /** After the last component was checked by lstat, before it is opened. */
  beforeFileOpen?(): void;
  /** After the bytes were read, before the file is checked again. */
  afterRead?(): void;
}

export interface CaptureWorkspaceFileOptions {
  /** Absolute path of the session's workspace; opened once, following symlinks (the user chose it). */
  workspace: string;
  /** The client's workspace-relative path. */
  path: string;
  /** The source maximum of the resource kind. */
  maxBytes: number;
  /** Absolute paths of the daemon's own state directories; a missing one is ignored. */
  excludedDirectories: readonly string[];
  hooks?: CaptureHooks;
}

export interface CapturedWorkspaceFile {
  /** The exact bytes read, at most `maxBytes`. */
  bytes: Buffer;
  /** The same bytes decoded; a byte-order mark is kept as U+FEFF. */
  text: string;
}

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
// libuv adds O_CLOEXEC to every open on Linux, so the flag is not spelled here (Node does not export it).
const DIRECTORY_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK keeps a FIFO swapped in after the lstat from blocking the open; O_NOCTTY keeps a terminal from
// becoming the daemon's controlling terminal.
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/** Bounds the walk up from the workspace root: PATH_MAX allows no deeper directory. */
const ANCESTORS_MAX = 4_096;

/**
 * Reads one workspace file without ever following a symlink below the workspace root, refusing anything
 * but a single-linked regular file of well-formed UTF-8 without NUL, outside credential paths and daemon
 * state, that did not visibly change while it was read. Every refusal is `invalid_payload` with a fixed
 * message (see refusals.ts); a failure of the daemon itself is `internal_error`.
 *
 * Node has no openat, so each component is opened as `/proc/self/fd/<parent fd>/<name>`: the magic link
 * resolves to the directory the daemon holds, whatever was renamed since, and O_NOFOLLOW applies to the
 * name. The walk is synchronous because descriptor numbers may be reused between asynchronous steps.
 */
export function captureWorkspaceFile(options: CaptureWorkspaceFileOptions): CapturedWorkspaceFile {
  const { bytes, text, finish } = readWorkspaceFile(options);
  finish();
  return { bytes, text };
}

/** A workspace file read, whose last checks are still to run. */
export interface PendingWorkspaceFile extends CapturedWorkspaceFile {
  /**
   * Runs the checks the read left for later and lets go of its descriptors; throws their refusal, which
   * overrides anything concluded from the bytes. Call it exactly once.
   */
  finish(): void;
}

/**
 * `captureWorkspaceFile` in two steps, so that the bytes can be put to use while the checks that need not
 * come first still run: the walk down and the read are done at once, while everything that can only
 * refuse what was read (daemon state at or above any directory walked, the file unchanged after the read,
 * no NUL) waits for `finish()`. The bytes count only once `finish()` returned. Whichever step fails, the
 * refusal is the one the checks in their original order would give: a failure of the read runs the
 * checks that were due before it first.
 */
export function readWorkspaceFile(options: CaptureWorkspaceFileOptions): PendingWorkspaceFile {
  const { workspace, maxBytes, hooks } = options;
  if (
    !Number.isSafeInteger(maxBytes) ||
    maxBytes < 0 ||
    maxBytes >= PROFILE_LIMITS.capture_reservation_bytes
  ) {
    throw new RangeError('maxBytes must be a non-negative integer below the capture reservation');
  }
  const components = parseRelativePath(options.path);
  if (isCredentialLikePath(components)) throw captureRefusal('credential_path');

  const deferred = new DeferredChecks();
  let excluded: Identity[] = [];
  deferred.add(() => {
    excluded = excludedIdentities(options.excludedDirectories);
  });
  const isExcludedDirectory = (stats: Identity) => isExcluded(stats, excluded);
  let rootFd: number;
  try {
    rootFd = openWorkspaceRoot(workspace);
  } catch (error) {
    throw deferred.refusalAfterChecks(error);
  }
  deferred.hold(rootFd);
  deferred.add(() => {
    const root = fstatSync(rootFd, { bigint: true });
    assertProcFdResolves(rootFd, root);
    if (isExcludedDirectory(root)) throw captureRefusal('excluded_directory');
    assertNoExcludedAncestor(rootFd, root, excluded);
  });
  try {
    const read = readBeneathRoot(rootFd, components, maxBytes, deferred, isExcludedDirectory, hooks);
    return { ...read, finish: () => deferred.run() };
  } catch (error) {
    throw deferred.refusalAfterChecks(error);
  }
}

function readBeneathRoot(
  rootFd: number,
  components: readonly string[],
  maxBytes: number,
  deferred: DeferredChecks,
  isExcludedDirectory: (stats: Identity) => boolean,
  hooks: CaptureHooks | undefined,
): CapturedWorkspaceFile {
  hooks?.afterDirectoryOpen?.(0);
  let directoryFd = rootFd;
  try {
    const directories = components.slice(0, -1);
    for (const [index, name] of directories.entries()) {
      const child = openDirectoryBeneath(directoryFd, name);
      if (directoryFd !== rootFd) closeSync(directoryFd);
      directoryFd = child;
      const stats = fstatSync(directoryFd, { bigint: true });
      if (!stats.isDirectory()) throw captureRefusal('not_directory');
      deferred.add(() => {
        if (isExcludedDirectory(stats)) throw captureRefusal('excluded_directory');
      });
      hooks?.afterDirectoryOpen?.(index + 1);
    }
  } catch (error) {
    if (directoryFd !== rootFd) closeSync(directoryFd);
    throw error;
  }
  // The file's last checks look it up beneath this directory again.
  if (directoryFd !== rootFd) deferred.hold(directoryFd);
  return readFileBeneath(directoryFd, components[components.length - 1]!, maxBytes, deferred, hooks);
}

function beneath(directoryFd: number, name: string): string {
  return `/proc/self/fd/${directoryFd}/${name}`;
}

function openWorkspaceRoot(workspace: string): number {
  if (typeof workspace !== 'string' || !isAbsolute(workspace) || workspace.includes('\0')) {
    throw captureRefusal('workspace_unavailable');
  }
  try {
    return openSync(workspace, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    throw refusalForErrno(error, 'workspace_unavailable');
  }
}

/** Without a mounted /proc the walk would silently report files as missing; refuse to run instead. */
function assertProcFdResolves(directoryFd: number, expected: BigIntStats): void {
  let resolved: BigIntStats;
  try {
    resolved = statSync(`/proc/self/fd/${directoryFd}`, { bigint: true });
  } catch {
    throw new WireError('internal_error');
  }
  if (!sameInode(resolved, expected)) throw new WireError('internal_error');
}

type Identity = Pick<FileState, 'dev' | 'ino'>;

function excludedIdentities(directories: readonly string[]): Identity[] {
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

function isExcluded(stats: Identity, excluded: readonly Identity[]): boolean {
  return excluded.some((identity) => sameInode(identity, stats));
}

/** A workspace at or below daemon state would expose that state; walk `..` up to `/` to find out. */
function assertNoExcludedAncestor(rootFd: number, root: BigIntStats, excluded: readonly Identity[]): void {
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
      if (isExcluded(parent, excluded)) throw captureRefusal('excluded_directory');
      current = parent;
    }
    throw new WireError('internal_error');
  } catch (error) {
    if (error instanceof WireError) throw error;
    throw new WireError('internal_error');
  } finally {
    if (currentFd !== rootFd) closeSync(currentFd);
  }
}

function openDirectoryBeneath(directoryFd: number, name: string): number {
  try {
    return openSync(beneath(directoryFd, name), DIRECTORY_FLAGS);
  } catch (error) {
    const code = errnoOf(error);
    // A symlink opened with O_DIRECTORY|O_NOFOLLOW fails with ENOTDIR, like a file; lstat only picks the message,
    // and an entry that no longer looks like a plain non-directory was most likely a swapped-in symlink.
    if (code === 'ENOTDIR' || code === 'ELOOP') {
      throw captureRefusal(isNonDirectoryBeneath(directoryFd, name) ? 'not_directory' : 'symlink');
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

function readFileBeneath(
  directoryFd: number,
  name: string,
  maxBytes: number,
  deferred: DeferredChecks,
  hooks: CaptureHooks | undefined,
): CapturedWorkspaceFile {
  const path = beneath(directoryFd, name);
  // The lstat refuses most non-regular files before their driver's open can run; the fstat below decides.
  const linked = lstatBeneath(path, 'not_found');
  assertCapturable(linked, maxBytes);
  hooks?.beforeFileOpen?.();

  let fd: number;
  try {
    fd = openSync(path, FILE_FLAGS);
  } catch (error) {
    throw refusalForErrno(error, 'unreadable');
  }
  deferred.hold(fd);
  const opened = fstatSync(fd, { bigint: true });
  assertCapturable(opened, maxBytes);
  if (!sameFileState(opened, linked)) throw captureRefusal('changed');

  // One byte more than the file says it holds shows a file that yields more than its size.
  const buffer = Buffer.alloc(Number(opened.size) + 1);
  const length = readAtMost(fd, buffer);
  hooks?.afterRead?.();
  if (length > maxBytes) throw captureRefusal('too_large');
  deferred.add(() => {
    const afterRead = fstatSync(fd, { bigint: true });
    const finalPath = lstatBeneath(path, 'changed');
    if (!sameFileState(afterRead, opened) || !sameFileState(finalPath, opened))
      throw captureRefusal('changed');
    // A file whose reported size differs from what it yields (a pseudo-file, or one rewritten in place
    // within one timestamp tick) is not a stable snapshot.
    if (BigInt(length) !== opened.size) throw captureRefusal('changed');
  });

  const bytes = buffer.subarray(0, length);
  const text = decodeUtf8(bytes);
  deferred.add(() => {
    if (bytes.includes(0)) throw captureRefusal('contains_nul');
  });
  return { bytes, text };
}

function lstatBeneath(path: string, whenMissing: CaptureRefusal): BigIntStats {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') throw captureRefusal(whenMissing);
    throw refusalForErrno(error, 'unreadable');
  }
}

function assertCapturable(stats: BigIntStats, maxBytes: number): void {
  if (stats.isSymbolicLink()) throw captureRefusal('symlink');
  if (!stats.isFile()) throw captureRefusal('not_regular_file');
  if (stats.nlink !== 1n) throw captureRefusal('hard_linked');
  if (stats.size > BigInt(maxBytes)) throw captureRefusal('too_large');
}

/** Reads until end of file or until the buffer (the size plus one) is full. */
function readAtMost(fd: number, buffer: Buffer): number {
  let length = 0;
  try {
    while (length < buffer.length) {
      const count = readSync(fd, buffer, length, buffer.length - length, null);
      if (count === 0) break;
      length += count;
    }
  } catch (error) {
    throw refusalForErrno(error, 'unreadable');
  }
  return length;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw captureRefusal('not_utf8');
  }
}

/** Maps an errno to a source refusal; anything that is the daemon's own failure becomes `internal_error`. */
function refusalForErrno(error: unknown, fallback: CaptureRefusal): WireError {
  switch (errnoOf(error)) {
    case 'ENOENT':
      return captureRefusal(fallback === 'workspace_unavailable' ? fallback : 'not_found');
    case 'ELOOP':
      return captureRefusal('symlink');
    case 'ENOTDIR':
      return captureRefusal(fallback === 'workspace_unavailable' ? fallback : 'not_directory');
    case 'ENXIO':
    case 'ENODEV':
    case 'EOPNOTSUPP':
      return captureRefusal('not_regular_file');
    case 'EACCES':
    case 'EPERM':
    case 'EIO':
    case 'EISDIR':
    case 'ENAMETOOLONG':
      return captureRefusal(fallback);
    default:
      return new WireError('internal_error');
  }
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
