import { type BigIntStats, closeSync, fstatSync, lstatSync } from 'node:fs';
import { isExcluded, openDirectoryBeneath } from '../capture/descriptor-walk.js';
import { decodeExactUtf8 } from '../capture/exact-utf8.js';
import { isHiddenPath } from '../confinement/hidden-places.js';
import { fittingPrefix } from '../tool-results/fitted-list.js';
import { entryPath, readEntries } from '../workspace/directory-entries.js';
import type { HeldWorkspace } from '../workspace/workspace-walk.js';
import type { SkillFileEntry } from './installed-skill.js';
import { SKILL_FILE_NAME } from './skill-discovery.js';
import { SKILL_LIMITS } from './skill-limits.js';

interface Listing {
  readonly held: HeldWorkspace;
  readonly found: SkillFileEntry[];
  examined: number;
  truncated: boolean;
}

/**
 * The files of a skill's folder that `load_skill` could read, its SKILL.md aside: single-linked regular files with UTF-8 names,
 * paths of at most `files_depth` components, never through a link, daemon state or a credential-like path
 * (a folder that cannot be read, or lies deeper, sets `truncated`). At most
 * `files_examined` entries are looked at; the files are given in byte order of their paths for as long as
 * their JSON fits `files_listing_bytes`. Either bound cut short sets `truncated`.
 */
export function listSkillFiles(
  held: HeldWorkspace,
  directoryFd: number,
): { files: SkillFileEntry[]; truncated: boolean } {
  const listing: Listing = { held, found: [], examined: 0, truncated: false };
  listDirectory(listing, directoryFd, [], 1);
  const sorted = listing.found.sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const files = fittingPrefix(sorted, SKILL_LIMITS.files_listing_bytes);
  return { files, truncated: listing.truncated || files.length < sorted.length };
}

function listDirectory(listing: Listing, directoryFd: number, path: readonly string[], depth: number): void {
  let entries: ReturnType<typeof readEntries>;
  try {
    entries = readEntries(directoryFd);
  } catch {
    listing.truncated = true;
    return;
  }
  for (const entry of entries) {
    if (listing.examined >= SKILL_LIMITS.files_examined) {
      listing.truncated = true;
      return;
    }
    listing.examined += 1;
    // A name that is not UTF-8 cannot be asked for by path.
    const name = decodeExactUtf8(entry.name);
    if (name === null) continue;
    const components = [...path, name];
    if (isHiddenPath(components, listing.held.hidden)) continue;
    let stats: BigIntStats;
    try {
      stats = lstatSync(entryPath(directoryFd, entry.name), { bigint: true });
    } catch {
      continue;
    }
    if (stats.isFile() && stats.nlink === 1n) {
      // The skill's own instructions come without a path.
      if (depth === 1 && name === SKILL_FILE_NAME) continue;
      listing.found.push({ path: components.join('/'), size: Number(stats.size) });
    } else if (stats.isDirectory()) {
      if (depth >= SKILL_LIMITS.files_depth) listing.truncated = true;
      else listSubdirectory(listing, directoryFd, components, depth + 1);
    }
  }
}

function listSubdirectory(listing: Listing, parentFd: number, path: readonly string[], depth: number): void {
  let directoryFd: number;
  try {
    directoryFd = openDirectoryBeneath(parentFd, path[path.length - 1]!);
  } catch {
    // Swapped for a link or gone since it was looked at: never followed.
    return;
  }
  try {
    if (isExcluded(fstatSync(directoryFd, { bigint: true }), listing.held.excluded)) return;
    listDirectory(listing, directoryFd, path, depth);
  } finally {
    closeSync(directoryFd);
  }
}
