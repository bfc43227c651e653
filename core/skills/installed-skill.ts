/** A skill read from `<home>/skills/<name>/SKILL.md`. */
export interface InstalledSkill {
  /** The directory name, exactly as discovered. */
  name: string;
  /** The front matter's description, trimmed. */
  description: string;
  /** What follows the front matter, leading blank lines dropped. */
  body: string;
}

/** Why a discovered skill was not loaded; a fixed code, so a warning never carries what the file holds. */
export type SkillSkipReason =
  | 'unreadable'
  | 'symlink'
  | 'not_regular_file'
  | 'hard_linked'
  | 'too_large'
  | 'not_utf8'
  | 'contains_nul'
  | 'credential_path'
  | 'no_front_matter'
  | 'malformed_front_matter'
  | 'name_mismatch'
  | 'no_description'
  | 'description_too_long'
  | 'invalid_name'
  | 'ambiguous_name'
  | 'total_too_large';

export interface InstalledSkills {
  /** In name order (byte order). */
  skills: InstalledSkill[];
  /** In name order; a disabled skill is not listed. */
  skipped: Array<{ skill: string; reason: SkillSkipReason }>;
}
