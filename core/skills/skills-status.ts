import { fittingPrefix } from '../tool-results/fitted-list.js';
import type { InstalledSkills } from './installed-skill.js';
import type { UnusedEntry } from './skill-discovery.js';
import { SKILL_LIMITS } from './skill-limits.js';

/** What `status` says of the installed skills. */
export interface SkillsStatus {
  /** The loaded skills' names, in name order. */
  loaded: string[];
  /** Every skill not loaded and every other entry beneath `skills/` not used, by path, with its reason. */
  skipped: Array<{ path: string; reason: string }>;
  /** How many names or entries the two lists leave out, each list being bounded by `status_list_bytes`. */
  omitted: number;
}

export function skillsStatus(installed: InstalledSkills, unused: readonly UnusedEntry[]): SkillsStatus {
  const names = installed.skills.map((skill) => skill.name);
  const skipped = [
    ...installed.skipped.map(({ skill, reason }) => ({ path: skill, reason })),
    ...unused.map(({ path, reason }) => ({ path, reason })),
  ].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
  const loaded = fittingPrefix(names, SKILL_LIMITS.status_list_bytes);
  const listed = fittingPrefix(skipped, SKILL_LIMITS.status_list_bytes);
  return {
    loaded,
    skipped: listed,
    omitted: names.length - loaded.length + skipped.length - listed.length,
  };
}
