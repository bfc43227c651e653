/** Bounds on the installed skills the daemon reads at startup and shows the model, in UTF-8 bytes. */
export const SKILL_LIMITS = {
  /** One SKILL.md as stored, byte-order mark and front matter included. */
  skill_bytes: 16_384,
  /** Bodies and descriptions of all loaded skills together; skills past it, in name order, are skipped. */
  total_bytes: 65_536,
  /** One description, after trimming. */
  description_bytes: 512,
  /** The index the system message carries; skills that do not fit are left out of it. */
  index_bytes: 8_192,
} as const;
