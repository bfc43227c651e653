/** The bounds of what an MCP server may offer the model and of how it is supervised. */
export const MCP_LIMITS = {
  /** Bytes of a prefixed tool name, `mcp_<server>_<tool>`. */
  name_bytes: 48,
  description_bytes: 512,
  /** Bytes of a tool's input schema, encoded as compact JSON. */
  schema_bytes: 32_768,
  /** Levels of arrays and objects a tool's input schema may nest (`{}` is one level). */
  schema_depth: 64,
  /**
   * Levels of arrays and objects a call's arguments may nest (the arguments object is one level): what a
   * schema within `schema_depth` describes. Encoding the request recurses once per level and throws a few
   * thousand levels down, so deeper arguments are refused before anything is sent.
   */
  arguments_depth: 64,
  /** Bytes of the compact JSON a call answers with. */
  output_bytes: 16_384,
  timeout_ms_default: 60_000,
  timeout_ms_min: 1_000,
  timeout_ms_max: 600_000,
  backoff_ms_base: 1_000,
  backoff_ms_max: 60_000,
  tools_per_server: 64,
} as const;

/** How servers are restarted and stopped. */
export const MCP_SUPERVISION = {
  /** A server ready this long before it exits is restarted after the base delay again. */
  stable_ms: 60_000,
  /** Spawns in a row that fail (the command cannot be run at all) before a server is `failed`. */
  spawn_attempts: 3,
  /**
   * Calls in a row that time out, with no answer from the server between them, before a ready server is
   * taken for hung and restarted. One timeout may be one slow tool (a long build, a page that never loads)
   * on a server whose state (a browser, an open repository) a restart would lose; three in a row mean it
   * answers nothing, and cost at most three calls (three minutes at the default deadline).
   */
  call_timeouts: 3,
  /** From SIGTERM to SIGKILL when a child is stopped. */
  kill_grace_ms: 2_000,
  /** Bytes of one message a server may send before its connection is dropped. */
  message_bytes: 4 * 1024 * 1024,
} as const;
