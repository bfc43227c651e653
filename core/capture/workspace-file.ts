import { type BigIntStats, fstatSync, openSync } from 'node:fs';
import { type ConfinedWorkspace, isPinnedFolder } from '../confinement/confined-workspace.js';
import { isHiddenPath } from '../confinement/hidden-places.js';
import { WireError } from '../errors.js';
import { PROFILE_LIMITS } from '../limits.js';
import { DeferredChecks } from './deferred-checks.js';
import {
  assertNoExcludedAncestor,
  assertProcFdResolves,
  beneath,
  excludedIdentities,
  FILE_FLAGS,
  type Identity,
  isExcluded,
  lstatBeneath,
  openWorkspaceRoot,
  readAtMost,
  refusalForErrno,
  WalkRefusal,
  walkDirectories,
} from './descriptor-walk.js';
import { decodeExactUtf8 } from './exact-utf8.js';
import { sameFileState } from './file-state.js';
import { captureRefusal } from './refusals.js';
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
  /**
   * The session's workspace, pinned; opened once, following symlinks (the user chose it). A bare path is a
   * folder with nothing pinned and nothing hidden but what the credential rules match.
   */
  workspace: string | ConfinedWorkspace;
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

/**
 * Reads one workspace file without ever following a symlink below the workspace root, refusing anything
 * but a single-linked regular file of well-formed UTF-8 without NUL, outside credential paths and daemon
 * state, that did not visibly change while it was read. Every refusal is `invalid_payload` with a fixed
 * message (see refusals.ts); a failure of the daemon itself is `internal_error`. The walk is the one of
 * descriptor-walk.ts.
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
  let pending: PendingWorkspaceFile;
  try {
    pending = readWalking(options);
  } catch (error) {
    throw asCaptureRefusal(error);
  }
  return {
    ...pending,
    finish: () => {
      try {
        pending.finish();
      } catch (error) {
        throw asCaptureRefusal(error);
      }
    },
  };
}

/** The walk's refusals carry only their reason; the capture answers them with its own messages. */
function asCaptureRefusal(error: unknown): unknown {
  return error instanceof WalkRefusal ? captureRefusal(error.reason) : error;
}

function readWalking(options: CaptureWorkspaceFileOptions): PendingWorkspaceFile {
  const { workspace, maxBytes, hooks } = options;
  if (
    !Number.isSafeInteger(maxBytes) ||
    maxBytes < 0 ||
    maxBytes >= PROFILE_LIMITS.capture_reservation_bytes
  ) {
    throw new RangeError('maxBytes must be a non-negative integer below the capture reservation');
  }
  const components = parseRelativePath(options.path);
  const pinned = typeof workspace === 'string' ? null : workspace;
  if (isHiddenPath(components, pinned?.hidden ?? [])) throw captureRefusal('credential_path');

  const deferred = new DeferredChecks();
  let excluded: Identity[] = [];
  deferred.add(() => {
    excluded = excludedIdentities(options.excludedDirectories);
  });
  const isExcludedDirectory = (stats: Identity) => isExcluded(stats, excluded);
  let rootFd: number;
  try {
    rootFd = openWorkspaceRoot(pinned?.path ?? (workspace as string));
  } catch (error) {
    throw deferred.refusalAfterChecks(error);
  }
  deferred.hold(rootFd);
  deferred.add(() => {
    const root = fstatSync(rootFd, { bigint: true });
    assertProcFdResolves(rootFd, root);
    if (isExcludedDirectory(root)) throw captureRefusal('excluded_directory');
    assertNoExcludedAncestor(rootFd, root, excluded);
    if (pinned !== null && !isPinnedFolder(rootFd, pinned)) throw new WireError('workspace_changed');
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
  const directoryFd = walkDirectories(rootFd, components.slice(0, -1), (stats, depth) => {
    deferred.add(() => {
      if (isExcludedDirectory(stats)) throw captureRefusal('excluded_directory');
    });
    hooks?.afterDirectoryOpen?.(depth);
  });
  // The file's last checks look it up beneath this directory again.
  if (directoryFd !== rootFd) deferred.hold(directoryFd);
  return readFileBeneath(directoryFd, components[components.length - 1]!, maxBytes, deferred, hooks);
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
  const text = decodeExactUtf8(bytes);
  if (text === null) throw captureRefusal('not_utf8');
  deferred.add(() => {
    if (bytes.includes(0)) throw captureRefusal('contains_nul');
  });
  return { bytes, text };
}

function assertCapturable(stats: BigIntStats, maxBytes: number): void {
  if (stats.isSymbolicLink()) throw captureRefusal('symlink');
  if (!stats.isFile()) throw captureRefusal('not_regular_file');
  if (stats.nlink !== 1n) throw captureRefusal('hard_linked');
  if (stats.size > BigInt(maxBytes)) throw captureRefusal('too_large');
}
