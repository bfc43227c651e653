/** The bounds of what an MCP server may offer the model and of how it is supervised. */
export const MCP_LIMITS = {
  /** Characters (code points) of a server's key in the configuration, the `<server>` of its tools' names. */
  server_name_characters: 64,
  /** Names of members a configuration entry's warning lists (each cut to `server_name_characters`). */
  listed_members: 32,
  /** Bytes of a tool name as the model sees it, `mcp_<server>_<tool>`: what providers accept. */
  name_bytes: 64,
  /** Bytes of a tool's own name as its server lists it (the protocol suggests at most 128 characters). */
  tool_name_bytes: 512,
  /** Bytes of a description the model sees; a longer one is cut (between characters). */
  description_bytes: 2_048,
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
  /** Bytes of a server's own message in a refused call's error text (one line, secrets replaced). */
  error_message_bytes: 1_024,
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
  /** From SIGTERM to SIGKILL when a child is stopped; how long ending an HTTP server's session may take. */
  kill_grace_ms: 2_000,
  /** Bytes of one message a server may send before its connection is dropped. */
  message_bytes: 4 * 1024 * 1024,
  /** Bytes of a child's latest stderr kept in memory, for the log line written when it exits or fails. */
  stderr_bytes: 8 * 1024,
  /** Of those, the last lines that log line carries. */
  stderr_log_lines: 20,
  /** Bytes of the last stderr line a lost server's `status` reason carries (secrets replaced). */
  status_line_bytes: 256,
} as const;
