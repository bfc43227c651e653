import type { HiddenPlaces } from '../confinement/hidden-places.js';
import { utf8ByteLength } from '../resources/unicode.js';
import { parseSkillFile } from './front-matter.js';
import type { InstalledSkill, InstalledSkills } from './installed-skill.js';
import type { DiscoveredSkill } from './skill-discovery.js';
import { readSkillFolder } from './skill-file.js';
import { SKILL_LIMITS } from './skill-limits.js';

export type {
  InstalledSkill,
  InstalledSkills,
  SkillFileEntry,
  SkillFolder,
  SkillSkipReason,
} from './installed-skill.js';
export { skillIndex } from './skill-index.js';
export { SKILL_LIMITS } from './skill-limits.js';

/**
 * Reads, once at startup, every discovered skill that is not disabled (compared case-insensitively).
 * Synchronous: it runs before the daemon serves. `excludedDirectories` is the daemon's state, which no
 * skill's walk may enter.
 *
 * Names that differ only in case are all skipped: the model could not tell which one it asked for. Skills
 * are taken in name order (byte order) until their bodies and descriptions together would pass
 * `retained_bytes`; that skill and every later one are skipped, unread.
 */
export function loadInstalledSkills(
  discovered: readonly DiscoveredSkill[],
  disabled: readonly string[],
  excludedDirectories: readonly string[],
  hiddenPlaces: HiddenPlaces,
): InstalledSkills {
  const off = new Set(disabled.map(fold));
  const candidates = discovered.filter((skill) => !off.has(fold(skill.name))).sort(byName);
  const skillsPerFold = new Map<string, number>();
  for (const { name } of candidates) skillsPerFold.set(fold(name), (skillsPerFold.get(fold(name)) ?? 0) + 1);

  const result: InstalledSkills = { skills: [], skipped: [], cut: [] };
  let totalBytes = 0;
  let full = false;
  for (const candidate of candidates) {
    const skip = (reason: InstalledSkills['skipped'][number]['reason']) =>
      result.skipped.push({ skill: candidate.path, reason });
    const { name } = candidate;
    if (!SKILL_NAME.test(name)) {
      skip('invalid_name');
      continue;
    }
    if (skillsPerFold.get(fold(name))! > 1) {
      skip('ambiguous_name');
      continue;
    }
    if (full) {
      skip('total_too_large');
      continue;
    }
    const folder = {
      root: candidate.root,
      components: candidate.components,
      hidden: hiddenPlaces.inside(candidate.root),
    };
    const read = readSkillFolder(folder, excludedDirectories);
    if ('refused' in read) {
      skip(read.refused);
      continue;
    }
    const parsed = parseSkillFile(read.text, name);
    if ('refused' in parsed) {
      skip(parsed.refused);
      continue;
    }
    const bytes = utf8ByteLength(parsed.body) + utf8ByteLength(parsed.description);
    if (totalBytes + bytes > SKILL_LIMITS.retained_bytes) {
      full = true;
      skip('total_too_large');
      continue;
    }
    totalBytes += bytes;
    const skill: InstalledSkill = {
      name,
      description: parsed.description,
      body: parsed.body,
      folder,
      files: read.files,
      filesTruncated: read.filesTruncated,
    };
    result.skills.push(skill);
    if (parsed.descriptionChars !== undefined) {
      result.cut.push({ skill: candidate.path, characters: parsed.descriptionChars });
    }
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

function byName(a: DiscoveredSkill, b: DiscoveredSkill): number {
  return byteOrder(a.name, b.name) || byteOrder(a.path, b.path);
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
