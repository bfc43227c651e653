const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * Bounds of one `run_command` call: its time limit (default and accepted range), the output kept of it,
 * and the encoded result the model receives.
 */
export const COMMAND_LIMITS = {
  timeout_ms_default: 30_000,
  timeout_ms_min: 1_000,
  timeout_ms_max: 600_000,
  output_bytes: 16_384,
  result_bytes: 16_384,
} as const;

/**
 * What every command is held to, each documented in docs/sandbox.md. Memory and processes are bounded by a
 * cgroup where the daemon can make one; config.json may change those two.
 */
export const COMMAND_BOUNDS = {
  /**
   * Commands running at once across the daemon; the others wait, a session holding at most half of them while
   * another session waits.
   */
  concurrent: 4,
  memory_bytes_default: 2 * GiB,
  processes_default: 256,
  /** The largest file a command may write (RLIMIT_FSIZE); larger writes fail with EFBIG. */
  file_size_bytes: 1 * GiB,
  /** Each emptied place (/tmp, the home, ...) is a tmpfs of at most this size. */
  tmpfs_bytes: 512 * MiB,
} as const;

/**
 * The walk of a workspace for what a command must not see: past any of these, the command is refused
 * rather than run with a part of the workspace unchecked.
 */
export const SANDBOX_SCAN_LIMITS = {
  /** Folders read (a large monorepo with its dependencies installed holds some tens of thousands). */
  directories: 100_000,
  /** Entries listed in all. */
  entries: 2_000_000,
  /** Folders below the workspace. */
  depth: 128,
  /** Folders above the workspace looked at for a repository's config. */
  depth_above: 256,
  /** Covered entries, read-only bindings and the folders above them, together. */
  marks: 2_048,
  /**
   * Workspaces with a scan thread of their own, keeping what their scans learned; a scan of another waits
   * while all of them are busy.
   */
  threads: 8,
} as const;
