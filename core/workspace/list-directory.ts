import { type BigIntStats, lstatSync } from 'node:fs';
import { errnoOf, isExcluded, refusalForErrno } from '../capture/descriptor-walk.js';
import { isHiddenPath } from '../confinement/hidden-places.js';
import { fitListInJson } from '../tool-results/fitted-json.js';
import { entryPath, readEntries } from './directory-entries.js';
import { WORKSPACE_TOOL_LIMITS as LIMITS } from './workspace-tool-limits.js';
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
  /** Whether entries follow this page; `next_offset` is where the next page starts. */
  truncated: boolean;
  next_offset: number | null;
  hidden: number;
}

export interface ListDirectoryArguments {
  path: readonly string[];
  /** The first entry of the page, counted in the listing (hidden entries take no place in it). */
  offset: number;
}

/**
 * Lists one page of a directory without following any symlink in it: its entries in byte order of names
 * from `offset`, at most LIMITS.list_entries_max of them and as many as fit the output bound. Entries
 * whose workspace path is credential-like, and directories that are daemon state, are left out and
 * counted in `hidden` (the whole directory's count, on every page); an entry removed while the listing
 * runs is left out silently.
 */
export function listDirectory(
  held: HeldWorkspace,
  args: ListDirectoryArguments,
  hooks?: WorkspaceHooks,
): ListDirectoryOutput {
  return withDirectory(held, args.path, hooks, (directoryFd) => {
    const page: ListedEntry[] = [];
    let hidden = 0;
    let more = false;
    let position = 0;
    for (const raw of readEntries(directoryFd)) {
      const name = raw.name.toString('utf8');
      if (isHiddenPath([...args.path, name], held.hidden)) {
        hidden += 1;
        continue;
      }
      const onPage = position >= args.offset && page.length < LIMITS.list_entries_max;
      // Entries off the page are looked up only when they might be daemon state, to be counted apart.
      if (!onPage && !raw.mayBeDirectory) {
        if (position >= args.offset) more = true;
        position += 1;
        continue;
      }
      const stats = lstatEntry(directoryFd, raw.name);
      if (stats === null) continue;
      if (stats.isDirectory() && isExcluded(stats, held.excluded)) {
        hidden += 1;
        continue;
      }
      if (onPage) page.push(listed(name, stats));
      else if (position >= args.offset) more = true;
      position += 1;
    }
    const shape = (entries: readonly ListedEntry[], cut: boolean): ListDirectoryOutput => {
      const truncated = cut || more;
      return {
        entries: [...entries],
        truncated,
        next_offset: truncated ? args.offset + entries.length : null,
        hidden,
      };
    };
    const fitted = fitListInJson(page, LIMITS.output_bytes, shape);
    return shape(page.slice(0, fitted.kept), fitted.truncated);
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
