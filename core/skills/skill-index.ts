import type { InstalledSkill } from './installed-skill.js';
import { SKILL_LIMITS } from './skill-limits.js';

export const SKILL_INDEX_HEADER = 'Installed skills (load one with load_skill before following it):';

// Line breaks and other control characters would let a description start a line of its own.
const BREAKS = /[\s\p{Cc}]+/gu;

/**
 * The short index the system message carries: name and description of each skill, one per line, under one
 * line saying how to load one (`load_skill`). '' when there is none. The skills are listed in the order
 * given for as long as the index fits `index_bytes`; a last line counts those left out.
 */
export function skillIndex(skills: readonly InstalledSkill[]): string {
  if (skills.length === 0) return '';
  const lines = skills.map((skill) => `- ${skill.name}: ${skill.description.replace(BREAKS, ' ')}`);
  // bytesBefore[k]: the header and the first k lines, each line with the newline before it.
  const bytesBefore = [utf8Bytes(SKILL_INDEX_HEADER)];
  for (const line of lines) bytesBefore.push(bytesBefore.at(-1)! + 1 + utf8Bytes(line));

  let listed = lines.length;
  const fits = (count: number) =>
    bytesBefore[count]! + (count < lines.length ? 1 + utf8Bytes(omittedLine(lines.length - count)) : 0) <=
    SKILL_LIMITS.index_bytes;
  while (listed > 0 && !fits(listed)) listed -= 1;

  const index = [SKILL_INDEX_HEADER, ...lines.slice(0, listed)];
  if (listed < lines.length) index.push(omittedLine(lines.length - listed));
  return index.join('\n');
}

function omittedLine(count: number): string {
  return `(${count} more not listed)`;
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
