const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * Bounds on the installed skills the daemon reads at startup and shows the model, in UTF-8 bytes unless
 * named otherwise. Each is documented in docs/configuration.md, "Installed skills".
 */
export const SKILL_LIMITS = {
  /** One SKILL.md as stored, byte-order mark and front matter included (the largest public ones take 74 KB). */
  skill_bytes: 256 * KiB,
  /**
   * The loaded skills' texts and descriptions kept in memory together (bodies are sent on demand, so this
   * bounds memory, not the system message); skills past it, in name order, are skipped.
   */
  retained_bytes: 16 * MiB,
  /**
   * Characters (Unicode scalar values) of one description after trimming, as the Agent Skills spec says;
   * a longer one is cut there.
   */
  description_chars: 1_024,
  /** The index the system message carries; skills that do not fit are left out of it. */
  index_bytes: 16 * KiB,
  /** Directory levels beneath `skills/` at which a folder holding SKILL.md is found (`<c>/skills/<name>`). */
  discovery_depth: 3,
  /** Entries of `skills/` and of the folders beneath it that discovery examines; the rest are not used. */
  discovery_entries: 4_096,
  /** The JSON of a skill's file listing as `load_skill` gives it; files past it are left out. */
  files_listing_bytes: 8 * KiB,
  /** Entries of one skill's folder examined to list its files, at most this many levels deep. */
  files_examined: 4_096,
  files_depth: 8,
  /** The JSON of each list that `status` reports of the skills (loaded names, skipped entries). */
  status_list_bytes: 6 * KiB,
} as const;
