/** The instructions file of the home, and of a workspace's root. */
export const INSTRUCTIONS_FILE = 'AGENTS.md';

/** Bounds on the `AGENTS.md` files; each is documented in docs/configuration.md, "The system message". */
export const INSTRUCTIONS_LIMITS = {
  /**
   * UTF-8 bytes of an `AGENTS.md` that are used, as Codex uses them (its `project_doc_max_bytes`): of a
   * larger file, its first ones, cut between characters.
   */
  file_bytes: 32_768,
  /** Workspaces whose last `AGENTS.md` read `status` remembers, the least recently read forgotten first. */
  reported_workspaces: 8,
  /** The JSON of the list of workspaces `status` gives: one at the longest workspace path always fits. */
  status_list_bytes: 6_144,
} as const;
