import { type BigIntStats, closeSync, fstatSync, openSync, statSync } from 'node:fs';
import {
  assertNoExcludedAncestor,
  assertProcFdResolves,
  beneath,
  excludedIdentities,
  FILE_FLAGS,
  type Identity,
  isExcluded,
  lstatBeneath,
  openDirectoryBeneath,
  openWorkspaceRoot,
  readAtMost,
  refusalForErrno,
  walkDirectories,
} from '../capture/descriptor-walk.js';
import { decodeExactUtf8 } from '../capture/exact-utf8.js';
import { sameFileState, sameInode } from '../capture/file-state.js';
import { type ConfinedWorkspace, isPinnedFolder, type OwnFolder } from '../confinement/confined-workspace.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';

/**
 * Test seam only: callbacks at the exact points where a hostile writer could swap a file or a directory, so
 * tests can prove each swap is refused or harmless. Production callers pass nothing.
 */
export interface WorkspaceHooks {
  /** After the directory at `depth` is opened and checked (0 is the workspace root, k the k-th component). */
  afterDirectoryOpen?(depth: number): void;
  /** After a file was checked by lstat, before it is opened. */
  beforeFileOpen?(): void;
  /** After a file's bytes were read, before it is checked again. */
  afterRead?(): void;
  /** After a write's temporary was written and synced, before the target is checked again and replaced. */
  beforeRename?(): void;
}

/** The workspace root, held open and checked, and the identities of the daemon's state directories. */
export interface HeldWorkspace {
  rootFd: number;
  excluded: readonly Identity[];
  /** The hidden places inside the workspace, relative to it (confinement/hidden-places.ts). */
  hidden: readonly string[];
}

/**
 * Opens the workspace (following symlinks: the user chose it), refuses it when it is the filesystem root,
 * daemon state or lies beneath daemon state, whatever path led there, runs `use` and closes the root
 * whatever happens.
 */
export function withWorkspace<T>(
  workspace: ConfinedWorkspace | OwnFolder,
  excludedDirectories: readonly string[],
  use: (held: HeldWorkspace) => T,
): T {
  const excluded = excludedIdentities(excludedDirectories);
  const rootFd = openWorkspaceRoot(workspace.path);
  try {
    const root = fstatSync(rootFd, { bigint: true });
    assertProcFdResolves(rootFd, root);
    if (sameInode(root, statSync('/', { bigint: true })))
      throw new WorkspaceToolFailure('workspace_not_allowed');
    if (isExcluded(root, excluded)) throw new WorkspaceToolFailure('excluded_directory');
    assertNoExcludedAncestor(rootFd, root, excluded);
    if ('identity' in workspace && !isPinnedFolder(rootFd, workspace))
      throw new WorkspaceToolFailure('workspace_changed');
    return use({ rootFd, excluded, hidden: workspace.hidden });
  } finally {
    closeSync(rootFd);
  }
}

/**
 * Opens `names` beneath the root as directories, never following a symlink and refusing daemon state, runs
 * `use` with the last one (the root itself for no names) and closes it whatever happens.
 */
export function withDirectory<T>(
  held: HeldWorkspace,
  names: readonly string[],
  hooks: WorkspaceHooks | undefined,
  use: (directoryFd: number) => T,
  openChild: (directoryFd: number, name: string) => number = openDirectoryBeneath,
): T {
  hooks?.afterDirectoryOpen?.(0);
  const directoryFd = walkDirectories(
    held.rootFd,
    names,
    (stats, depth) => {
      if (isExcluded(stats, held.excluded)) throw new WorkspaceToolFailure('excluded_directory');
      hooks?.afterDirectoryOpen?.(depth);
    },
    openChild,
  );
  try {
    return use(directoryFd);
  } finally {
    if (directoryFd !== held.rootFd) closeSync(directoryFd);
  }
}

/** A single-linked regular file held open, with its status when it was opened. */
export interface HeldFile {
  fd: number;
  /** Its name beneath the held directory, to look it up again. */
  path: string;
  state: BigIntStats;
}

/** Refuses anything but a single-linked regular file. */
export function assertSingleRegularFile(stats: BigIntStats): void {
  if (stats.isSymbolicLink()) throw new WorkspaceToolFailure('symlink');
  if (!stats.isFile()) throw new WorkspaceToolFailure('not_regular_file');
  if (stats.nlink !== 1n) throw new WorkspaceToolFailure('hard_linked');
}

/**
 * Opens `name` beneath the held directory as a single-linked regular file, runs `use` and closes it. The
 * lstat refuses most non-regular files before their driver's open can run; the fstat decides, and a file
 * swapped between the two is `changed`.
 */
export function withRegularFile<T>(
  directoryFd: number,
  name: string,
  hooks: WorkspaceHooks | undefined,
  use: (file: HeldFile) => T,
): T {
  const path = beneath(directoryFd, name);
  const linked = lstatBeneath(path, 'not_found');
  assertSingleRegularFile(linked);
  hooks?.beforeFileOpen?.();
  let fd: number;
  try {
    fd = openSync(path, FILE_FLAGS);
  } catch (error) {
    throw refusalForErrno(error, 'unreadable');
  }
  try {
    const state = fstatSync(fd, { bigint: true });
    assertSingleRegularFile(state);
    if (!sameFileState(state, linked)) throw new WorkspaceToolFailure('changed');
    return use({ fd, path, state });
  } finally {
    closeSync(fd);
  }
}

/** Refuses a file whose descriptor or name shows any change since it was opened. */
export function assertUnchanged(file: HeldFile): void {
  const afterRead = fstatSync(file.fd, { bigint: true });
  const finalPath = lstatBeneath(file.path, 'changed');
  if (!sameFileState(afterRead, file.state) || !sameFileState(finalPath, file.state)) {
    throw new WorkspaceToolFailure('changed');
  }
}

/** Whether the bytes are text a tool may handle: well-formed UTF-8 without NUL. */
export function textOf(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  return decodeExactUtf8(bytes);
}

/**
 * The whole file as text, at most `maxBytes`: `too_large` beyond, `changed` when it yields other than its
 * size or changes while read, `binary_file` unless it is well-formed UTF-8 without NUL.
 */
export function readWholeText(file: HeldFile, maxBytes: number, hooks: WorkspaceHooks | undefined): string {
  if (file.state.size > BigInt(maxBytes)) throw new WorkspaceToolFailure('too_large');
  // One byte more than the file says it holds shows a file that yields more than its size.
  const buffer = Buffer.alloc(Number(file.state.size) + 1);
  const length = readAtMost(file.fd, buffer, 0);
  hooks?.afterRead?.();
  assertUnchanged(file);
  if (BigInt(length) !== file.state.size) throw new WorkspaceToolFailure('changed');
  const text = textOf(buffer.subarray(0, length));
  if (text === null) throw new WorkspaceToolFailure('binary_file');
  return text;
}
