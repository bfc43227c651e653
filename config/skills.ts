import type { Dirent } from 'node:fs';
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const SKILLS_DIRECTORY_NAME = 'skills';
export const SKILL_FILE_NAME = 'SKILL.md';

/**
 * The skills installed in `<home>/skills/<name>/SKILL.md`, by directory name, sorted. Read once at startup.
 * Disabling a skill does not remove it from this list: its name stays reserved.
 *
 * A skill is a real directory (not a symlink) holding an entry named SKILL.md, whatever that entry is:
 * whether it can be used (a regular file, not a symlink, a FIFO or a directory) is decided when the skill
 * is read, which says why it was not. The `skills` folder itself is followed like the home is, since it is
 * part of the daemon's own layout.
 */
export function discoverSkills(home: string): string[] {
  const root = join(home, SKILLS_DIRECTORY_NAME);
  let entries: Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && holdsSkillFile(join(root, entry.name))) names.push(entry.name);
  }
  return names.sort();
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
