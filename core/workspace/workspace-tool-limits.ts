import { PROFILE_LIMITS } from '../limits.js';
import { TOOL_RESULT_LIMITS } from '../tool-results/result-limits.js';

const MiB = 1024 * 1024;

/** Every bound of the workspace file tools, by name, so that documents and tests use the same numbers. */
export const WORKSPACE_TOOL_LIMITS = Object.freeze({
  /** Characters of a workspace-relative path argument (its UTF-8 bytes are bounded alike by the path check). */
  path_chars_max: PROFILE_LIMITS.source_path_bytes,
  /**
   * UTF-8 bytes of the compact JSON a read_file, list_directory or search_files result takes: the built-in
   * tools' output bound. Each fits its result into it by the encoded size, cutting it short with
   * `truncated` and where to go on from.
   */
  output_bytes: TOOL_RESULT_LIMITS.output_bytes,
  /** Bytes of one read_file window, and its default length. */
  read_length_max: 16_384,
  /** Entries of one list_directory page. */
  list_entries_max: 500,
  /** Characters of a search_files pattern. */
  search_pattern_chars_max: 256,
  /** Matches of one search_files answer. */
  search_matches_max: 100,
  /** Files one search_files call reads. */
  search_files_max: 5_000,
  /** Bytes of a file search_files still reads; larger files are skipped. */
  search_file_bytes_max: MiB,
  /** Characters of a matching line as search_files returns it. */
  search_line_chars_max: 256,
  /** Directory levels search_files descends beneath its start directory. */
  search_depth_max: 64,
  /** UTF-8 bytes of write_file's content and of edit_file's result. */
  write_bytes_max: 262_144,
  /** Bytes of a file edit_file reads. */
  edit_file_bytes_max: 262_144,
  /** What WorkspaceTools uses when its options leave these out. */
  deadline_ms_default: 30_000,
  threads_default: 4,
  abandoned_max_default: 8,
});
