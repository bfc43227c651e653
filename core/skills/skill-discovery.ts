/** What startup finds beneath `<home>/skills` (config/skills.ts does the finding), as the skills domain reads it. */

export const SKILL_FILE_NAME = 'SKILL.md';

/** A folder holding a `SKILL.md`, found beneath `<home>/skills`. */
export interface DiscoveredSkill {
  /** The folder's name as found (for a followed link, the link's own name): the skill's name. */
  name: string;
  /** Its path beneath `skills/`, `/`-separated, as warnings and `status` show it. */
  path: string;
  /** Where its files are read from: `<home>/skills`, or the real path of the last link followed to reach it. */
  root: string;
  /** The folders from `root` down to the skill's own, walked without following a link when it is read. */
  components: string[];
}

/** Why an entry beneath `skills/` is not used; every such entry is reported, none is passed over silently. */
export type UnusedEntryReason =
  /** Its name starts with a dot. */
  | 'hidden'
  /** A file, or anything else that is not a folder, where skill folders are looked for. */
  | 'not_a_skill'
  /** A folder with no SKILL.md in it or in its folders, down to `discovery_depth` levels beneath `skills/`. */
  | 'no_skill'
  /** It could not be looked at. */
  | 'unreadable'
  /** Past `discovery_entries`: the folder holding it was not examined further. */
  | 'not_examined'
  | LinkRefusal;

/** Why a symbolic link beneath `skills/` is not followed. */
export type LinkRefusal =
  /** It leads nowhere, or to something that cannot be looked at. */
  | 'link_broken'
  /** It leads to something other than a folder. */
  | 'link_not_directory'
  /** It leads to a folder the daemon's user does not own. */
  | 'link_other_owner'
  /** It leads to, or through, a credential-like path (`.ssh`, `.aws`, `.git`, …). */
  | 'link_credential_path'
  /** It leads to the daemon's home or a folder holding it, or into its state. */
  | 'link_daemon_home'
  /** It leads back to a folder it lies in, which would find the same skills again and again. */
  | 'link_loop';

export interface UnusedEntry {
  path: string;
  reason: UnusedEntryReason;
}

export interface SkillDiscovery {
  /** In path order (byte order). */
  skills: DiscoveredSkill[];
  unused: UnusedEntry[];
}
