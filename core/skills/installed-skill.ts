/** A file of a skill's folder, as `load_skill` lists it. */
export interface SkillFileEntry {
  /** Relative to the skill's folder, `/`-separated. */
  path: string;
  /** Bytes, when the folder was listed at startup. */
  size: number;
}

/** A skill read from a folder beneath `<home>/skills` holding a SKILL.md. */
export interface InstalledSkill {
  /** The folder's name, exactly as discovered. */
  name: string;
  /** The front matter's description, trimmed, cut to `description_chars` characters. */
  description: string;
  /** What follows the front matter, leading blank lines dropped. */
  body: string;
  /** Where its bundled files are read: a folder opened following links, and the path beneath it. */
  folder: SkillFolder;
  /** The regular files of its folder, in path order, as far as `files_listing_bytes` goes. */
  files: SkillFileEntry[];
  /** Whether files were left out of `files`. */
  filesTruncated: boolean;
}

export interface SkillFolder {
  /** An absolute path: `<home>/skills`, or the real path of a followed link. */
  root: string;
  /** The folders beneath `root` to the skill's own; none of them may be a link when a file is read. */
  components: readonly string[];
  /** The places no tool may read that lie beneath `root`, relative to it (confinement/hidden-places.ts). */
  hidden: readonly string[];
}

/** Why a discovered skill was not loaded; a fixed code, so a warning never carries what the file holds. */
export type SkillSkipReason =
  | 'unreadable'
  | 'symlink'
  | 'not_regular_file'
  | 'hard_linked'
  | 'too_large'
  | 'not_text'
  | 'credential_path'
  | 'no_front_matter'
  | 'malformed_front_matter'
  | 'name_mismatch'
  | 'no_description'
  | 'invalid_name'
  | 'ambiguous_name'
  | 'total_too_large';

export interface InstalledSkills {
  /** In name order (byte order). */
  skills: InstalledSkill[];
  /** In name order, by the skill's path beneath `skills/`; a disabled skill is not listed. */
  skipped: Array<{ skill: string; reason: SkillSkipReason }>;
  /** The loaded skills whose description was cut, by path, with its length before in characters. */
  cut: Array<{ skill: string; characters: number }>;
}
