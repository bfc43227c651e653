import { fstatSync, readlinkSync } from 'node:fs';

/**
 * A session's workspace as every tool reaches it: the path it was made with (opened following links, as the
 * user chose it), pinned by the real path and identity its folder had when it was pinned, with the places
 * no tool may read that lie in it.
 */
export interface ConfinedWorkspace {
  path: string;
  /** The real path (every link followed) when it was pinned. */
  real: string;
  /**
   * The folder's device and inode when it was pinned, in decimal; null until a daemon that did not make the
   * session has pinned them (it is then checked by its real path alone).
   */
  identity: { dev: string; ino: string } | null;
  /** The hidden places inside it, relative to it (hidden-places.ts). */
  hidden: readonly string[];
}

/**
 * Whether the folder held open at `rootFd` is still the pinned one: the same device and inode, reached at
 * the same real path. A folder moved, replaced, or swapped for a link to another is not.
 */
export function isPinnedFolder(rootFd: number, workspace: ConfinedWorkspace): boolean {
  if (readlinkSync(`/proc/self/fd/${rootFd}`) !== workspace.real) return false;
  if (workspace.identity === null) return true;
  const { dev, ino } = fstatSync(rootFd, { bigint: true });
  return String(dev) === workspace.identity.dev && String(ino) === workspace.identity.ino;
}

/**
 * A folder of the daemon's own choosing that the file walk reads like a workspace (its home's `AGENTS.md`,
 * an installed skill's folder): nothing to pin, the hidden places inside it still hidden.
 */
export interface OwnFolder {
  path: string;
  hidden: readonly string[];
}

/** A folder the daemon's own, unpinned. */
export function ownFolder(path: string, hidden: readonly string[] = []): OwnFolder {
  return { path, hidden };
}
