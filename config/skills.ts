import type { Dirent } from 'node:fs';
import { closeSync, constants, fstatSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const SKILLS_DIRECTORY_NAME = 'skills';
export const SKILL_FILE_NAME = 'SKILL.md';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;
// Non-blocking and no controlling terminal: probing must not hang on a FIFO or grab a device.
const PROBE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

/**
 * The skills installed in `<home>/skills/<name>/SKILL.md`, by directory name, sorted. Read once at startup.
 * Disabling a skill does not remove it from this list: its name stays reserved.
 *
 * A skill is a real directory (not a symlink) holding a readable regular file SKILL.md (not a symlink).
 * Anything else, including whatever cannot be read, is skipped rather than refused. The `skills` folder
 * itself is followed like the home is, since it is part of the daemon's own layout.
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
    if (entry.isDirectory() && hasReadableSkillFile(join(root, entry.name))) names.push(entry.name);
  }
  return names.sort();
}

function hasReadableSkillFile(skillDirectory: string): boolean {
  let fd: number;
  try {
    fd = openSync(join(skillDirectory, SKILL_FILE_NAME), PROBE_FLAGS);
  } catch {
    return false;
  }
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
