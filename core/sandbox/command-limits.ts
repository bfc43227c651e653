/** Bounds of one `run_command` call: its time limit (default and accepted range) and the output it returns. */
export const COMMAND_LIMITS = {
  timeout_ms_default: 30_000,
  timeout_ms_min: 1_000,
  timeout_ms_max: 600_000,
  output_bytes: 16_384,
} as const;
