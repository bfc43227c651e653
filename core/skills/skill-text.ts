import type { InstalledSkill } from './installed-skill.js';

/**
 * The text `load_skill {name}` gives the model: compact JSON {"name","description","content"}; null for a
 * name that is not loaded (exact, case-sensitive).
 */
export function loadSkillText(skills: readonly InstalledSkill[], name: string): string | null {
  const skill = skills.find((candidate) => candidate.name === name);
  if (skill === undefined) return null;
  return JSON.stringify({ name: skill.name, description: skill.description, content: skill.body });
}
