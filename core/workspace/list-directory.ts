import { type BigIntStats, lstatSync } from 'node:fs';
import { isCredentialLikePath } from '../capture/credential-paths.js';
import { errnoOf, isExcluded, refusalForErrno } from '../capture/descriptor-walk.js';
import { entryPath, readEntries } from './directory-entries.js';
import { WORKSPACE_TOOL_LIMITS } from './workspace-tool-limits.js';
import { type HeldWorkspace, type WorkspaceHooks, withDirectory } from './workspace-walk.js';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface ListedEntry {
  name: string;
  type: EntryType;
  /** Only for files. */
  size?: number;
}

export interface ListDirectoryOutput {
  entries: ListedEntry[];
  truncated: boolean;
  hidden: number;
}

/**
 * Lists a directory without following any symlink in it. Entries whose workspace path is credential-like,
 * and directories that are daemon state, are left out and counted in `hidden`; an entry removed while the
 * listing runs is left out silently.
 */
export function listDirectory(
  held: HeldWorkspace,
  args: { path: readonly string[] },
  hooks?: WorkspaceHooks,
): ListDirectoryOutput {
  return withDirectory(held, args.path, hooks, (directoryFd) => {
    const entries: ListedEntry[] = [];
    let hidden = 0;
    let truncated = false;
    for (const raw of readEntries(directoryFd)) {
      const name = raw.name.toString('utf8');
      if (isCredentialLikePath([...args.path, name])) {
        hidden += 1;
        continue;
      }
      // Only the first entries are looked up in full; past them, only what might be daemon state is.
      if (entries.length >= WORKSPACE_TOOL_LIMITS.list_entries_max && !raw.mayBeDirectory) {
        truncated = true;
        continue;
      }
      const stats = lstatEntry(directoryFd, raw.name);
      if (stats === null) continue;
      if (stats.isDirectory() && isExcluded(stats, held.excluded)) {
        hidden += 1;
        continue;
      }
      if (entries.length >= WORKSPACE_TOOL_LIMITS.list_entries_max) {
        truncated = true;
        continue;
      }
      entries.push(listed(name, stats));
    }
    return { entries, truncated, hidden };
  });
}

function lstatEntry(directoryFd: number, name: Buffer): BigIntStats | null {
  try {
    return lstatSync(entryPath(directoryFd, name), { bigint: true });
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw refusalForErrno(error, 'unreadable');
  }
}

function listed(name: string, stats: BigIntStats): ListedEntry {
  if (stats.isFile()) return { name, type: 'file', size: Number(stats.size) };
  if (stats.isDirectory()) return { name, type: 'directory' };
  if (stats.isSymbolicLink()) return { name, type: 'symlink' };
  return { name, type: 'other' };
}
