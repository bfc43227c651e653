import { parseSkillFile } from './front-matter.js';
import type { InstalledSkill, InstalledSkills } from './installed-skill.js';
import { readSkillFile } from './skill-file.js';
import { SKILL_LIMITS } from './skill-limits.js';

export type { InstalledSkill, InstalledSkills, SkillSkipReason } from './installed-skill.js';
export { skillIndex } from './skill-index.js';
export { SKILL_LIMITS } from './skill-limits.js';
export { loadSkillText } from './skill-text.js';

/**
 * Reads, once at startup, every discovered skill that is not disabled (compared case-insensitively).
 * Synchronous: it runs before the daemon serves.
 *
 * Names that differ only in case are all skipped: the model could not tell which one it asked for. Skills
 * are taken in name order (byte order) until their bodies and descriptions together would pass
 * `total_bytes`; that skill and every later one are skipped, unread.
 */
export function loadInstalledSkills(
  home: string,
  discovered: readonly string[],
  disabled: readonly string[],
): InstalledSkills {
  const off = new Set(disabled.map(fold));
  const names = [...new Set(discovered)].filter((name) => !off.has(fold(name))).sort(byteOrder);
  const namesPerFold = new Map<string, number>();
  for (const name of names) namesPerFold.set(fold(name), (namesPerFold.get(fold(name)) ?? 0) + 1);

  const result: InstalledSkills = { skills: [], skipped: [] };
  let totalBytes = 0;
  let full = false;
  for (const name of names) {
    if (!SKILL_NAME.test(name)) {
      result.skipped.push({ skill: name, reason: 'invalid_name' });
      continue;
    }
    if (namesPerFold.get(fold(name))! > 1) {
      result.skipped.push({ skill: name, reason: 'ambiguous_name' });
      continue;
    }
    if (full) {
      result.skipped.push({ skill: name, reason: 'total_too_large' });
      continue;
    }
    const file = readSkillFile(home, name);
    if ('refused' in file) {
      result.skipped.push({ skill: name, reason: file.refused });
      continue;
    }
    const parsed = parseSkillFile(file.text, name);
    if ('refused' in parsed) {
      result.skipped.push({ skill: name, reason: parsed.refused });
      continue;
    }
    const skill: InstalledSkill = { name, description: parsed.description, body: parsed.body };
    const bytes = Buffer.byteLength(skill.body, 'utf8') + Buffer.byteLength(skill.description, 'utf8');
    if (totalBytes + bytes > SKILL_LIMITS.total_bytes) {
      full = true;
      result.skipped.push({ skill: name, reason: 'total_too_large' });
      continue;
    }
    totalBytes += bytes;
    result.skills.push(skill);
  }
  return result;
}

/**
 * What a skill's directory may be called for the skill to be shown: its name goes into the system message's
 * index one per line and is what `load_skill` takes, so it is kept to plain visible characters.
 */
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function fold(name: string): string {
  return name.toLowerCase();
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
