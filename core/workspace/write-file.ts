import { type BigIntStats, lstatSync, mkdirSync } from 'node:fs';
import { beneath, errnoOf, openDirectoryBeneath, WalkRefusal } from '../capture/descriptor-walk.js';
import { replaceAtomically, writeRefusal } from './atomic-write.js';
import {
  assertSingleRegularFile,
  type HeldWorkspace,
  type WorkspaceHooks,
  withDirectory,
} from './workspace-walk.js';

export interface WriteFileOutput {
  bytes: number;
  created: boolean;
}

/** A new file's mode; a replaced file keeps its own. */
const NEW_FILE_MODE = 0o644;
/** Before the umask, as `mkdir -p` creates them. */
const NEW_DIRECTORY_MODE = 0o777;

/**
 * Creates or replaces a file with `content`, atomically (see atomic-write.ts). Missing parent directories
 * are created one at a time beneath the held one and opened like any other, so a symlink swapped in for
 * one is refused; an existing target must be a single-linked regular file, before and just before the
 * rename.
 */
export function writeFile(
  held: HeldWorkspace,
  args: { path: readonly string[]; content: string },
  hooks?: WorkspaceHooks,
): WriteFileOutput {
  const name = args.path[args.path.length - 1]!;
  const bytes = Buffer.from(args.content, 'utf8');
  return withDirectory(
    held,
    args.path.slice(0, -1),
    hooks,
    (directoryFd) => {
      const existing = replaceableTarget(directoryFd, name);
      const mode = existing ? Number(existing.mode & 0o777n) : NEW_FILE_MODE;
      replaceAtomically(directoryFd, name, bytes, mode, () => {
        hooks?.beforeRename?.();
        replaceableTarget(directoryFd, name);
      });
      return { bytes: bytes.length, created: existing === null };
    },
    openOrCreateDirectory,
  );
}

/** The target's status, or null when there is none; refuses anything a write must not replace. */
function replaceableTarget(directoryFd: number, name: string): BigIntStats | null {
  let stats: BigIntStats;
  try {
    stats = lstatSync(beneath(directoryFd, name), { bigint: true });
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw writeRefusal(error);
  }
  assertSingleRegularFile(stats);
  return stats;
}

function openOrCreateDirectory(directoryFd: number, name: string): number {
  try {
    return openDirectoryBeneath(directoryFd, name);
  } catch (error) {
    if (!(error instanceof WalkRefusal && error.reason === 'not_found')) throw error;
  }
  try {
    // mkdir never follows a symlink in its last component: one put there meanwhile fails with EEXIST.
    mkdirSync(beneath(directoryFd, name), NEW_DIRECTORY_MODE);
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw writeRefusal(error);
  }
  return openDirectoryBeneath(directoryFd, name);
}
