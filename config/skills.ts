import { lstatSync, opendirSync } from 'node:fs';
import { join } from 'node:path';
import {
  SKILL_FILE_NAME,
  type SkillDiscovery,
  type UnusedEntryReason,
} from '../core/skills/skill-discovery.js';
import { SKILL_LIMITS } from '../core/skills/skill-limits.js';
import { SkillLinks } from './skill-links.js';

export const SKILLS_DIRECTORY_NAME = 'skills';
/** What a folder without any skill is reported as instead, once for all. */
const COLLAPSED: ReadonlySet<UnusedEntryReason> = new Set(['not_a_skill', 'no_skill']);

/** A folder being searched: where it is read from, and how it is shown. */
interface Folder {
  root: string;
  components: string[];
  shown: string[];
  /** The real path of every folder from `skills/` down to this one, to recognise a link back up. */
  chain: string[];
}

/**
 * The skills installed beneath `<home>/skills`, read once at startup. A folder holding an entry named
 * SKILL.md is a skill, whatever that entry is (whether it can be used is decided when it is read, which
 * says why it was not); a folder without one is searched in turn, down to `discovery_depth` levels, so a
 * cloned collection (`skills/<collection>/skills/<name>/`) is found. A symbolic link to a folder is
 * followed under the rules of skill-links.ts. Every other entry met is reported as unused with its reason;
 * a folder holding no skill at all is reported once (`no_skill`), with the entries inside it that were
 * not looked into (hidden ones, refused links, unreadable ones) and not file by file. Disabling a skill does not remove
 * it from the list: its name stays reserved. The `skills` folder itself is followed like the home is,
 * since it is part of the daemon's own layout.
 */
export function discoverSkills(home: string): SkillDiscovery {
  const root = join(home, SKILLS_DIRECTORY_NAME);
  const links = new SkillLinks(home);
  const discovery: SkillDiscovery = { skills: [], unused: [] };
  const top = links.realPathOf(root);
  if (top === null) return discovery;
  const search = new Search(links, discovery);
  search.folder({ root, components: [], shown: [], chain: [top] }, 1);
  discovery.skills.sort((a, b) => byteOrder(a.path, b.path));
  return discovery;
}

class Search {
  readonly #links: SkillLinks;
  readonly #found: SkillDiscovery;
  #examined = 0;
  #stopped = false;

  constructor(links: SkillLinks, found: SkillDiscovery) {
    this.#links = links;
    this.#found = found;
  }

  /** Searches the entries of `folder`, which lies `level` levels beneath `skills/`. */
  folder(folder: Folder, level: number): void {
    const here = join(folder.root, ...folder.components);
    const names = entryNames(here, SKILL_LIMITS.discovery_entries - this.#examined + 1);
    if (names === null) {
      if (folder.shown.length > 0) this.#unused(folder.shown, 'unreadable');
      return;
    }
    for (const name of names) {
      if (this.#examined >= SKILL_LIMITS.discovery_entries) {
        this.#stopped = true;
        this.#unused([...folder.shown, name], 'not_examined');
        return;
      }
      this.#examined += 1;
      this.#entry(folder, name, level);
      if (this.#stopped) return;
    }
  }

  #entry(parent: Folder, name: string, level: number): void {
    const shown = [...parent.shown, name];
    const child = name.startsWith('.') ? 'hidden' : this.#childFolder(parent, name);
    if (typeof child === 'string') {
      this.#unused(shown, child);
      return;
    }
    if (holdsSkillFile(join(child.root, ...child.components))) {
      this.#found.skills.push({
        name,
        path: shown.join('/'),
        root: child.root,
        components: child.components,
      });
      return;
    }
    if (level >= SKILL_LIMITS.discovery_depth) {
      this.#unused(shown, 'no_skill');
      return;
    }
    const skillsBefore = this.#found.skills.length;
    const unusedBefore = this.#found.unused.length;
    this.folder(child, level + 1);
    // A folder without any skill is one unused entry, not one per file or empty folder inside it; what
    // may hold skills that were not looked at (a hidden folder, a refused link) is still named.
    if (this.#found.skills.length === skillsBefore && !this.#stopped) {
      const inside = this.#found.unused.splice(unusedBefore);
      this.#unused(shown, 'no_skill');
      this.#found.unused.push(...inside.filter((entry) => !COLLAPSED.has(entry.reason)));
    }
  }

  /** The folder the entry `name` of `parent` is, or links to under the link rules; else why it is not used. */
  #childFolder(parent: Folder, name: string): Folder | UnusedEntryReason {
    const shown = [...parent.shown, name];
    const path = join(parent.root, ...parent.components, name);
    try {
      const stats = lstatSync(path);
      if (stats.isDirectory()) {
        const real = join(parent.chain.at(-1)!, name);
        return { ...parent, components: [...parent.components, name], shown, chain: [...parent.chain, real] };
      }
      if (!stats.isSymbolicLink()) return 'not_a_skill';
    } catch {
      return 'unreadable';
    }
    const followed = this.#links.follow(path, parent.chain);
    if ('refused' in followed) return followed.refused;
    return { root: followed.real, components: [], shown, chain: [...parent.chain, followed.real] };
  }

  #unused(shown: readonly string[], reason: UnusedEntryReason): void {
    this.#found.unused.push({ path: shown.join('/'), reason });
  }
}

/**
 * The names of a folder's entries in byte order, at most `max` of them (a folder with more is not read to
 * its end); null when it cannot be read.
 */
function entryNames(folder: string, max: number): string[] | null {
  const names: string[] = [];
  try {
    const dir = opendirSync(folder);
    try {
      for (let entry = dir.readSync(); entry !== null && names.length < max; entry = dir.readSync()) {
        names.push(entry.name);
      }
    } finally {
      dir.closeSync();
    }
  } catch {
    return null;
  }
  return names.sort(byteOrder);
}

/** An lstat opens nothing, so neither a FIFO nor a device can block or act here. */
function holdsSkillFile(skillDirectory: string): boolean {
  try {
    lstatSync(join(skillDirectory, SKILL_FILE_NAME));
    return true;
  } catch {
    return false;
  }
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
