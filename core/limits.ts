/**
 * Every bound of the wire and of the `application_resources_v1` profile, once, named as the spec
 * names it. Nothing else in the daemon spells these numbers.
 */
const KiB = 1024;
const MiB = 1024 * KiB;

/** wire-v2 section 1 */
export const WIRE_LIMITS = {
  frame_bytes: 65_536,
  payload_bytes: 32_768,
  record_bytes: 65_536,
} as const;

/** Retention of settled operation outcomes (wire-v2 section 6). */
export const OPERATION_RETENTION_MS = 600_000;

/** Daemon-chosen bounds the spec leaves open; each is documented in docs/protocol.md. */
export const SERVICE_LIMITS = {
  /**
   * Levels of arrays and objects one frame may nest, the envelope itself included: a deeper line is
   * `invalid_request`.
   */
  frame_nesting_depth: 64,
  /** Requests a connection may have in flight before the daemon stops reading from it. */
  in_flight_per_connection: 256,
  /** Outbound bytes queued for one connection before reading from it pauses. */
  outbound_soft_bytes: 1 * MiB,
  /** Outbound bytes queued for one connection before it is disconnected as too slow. */
  outbound_hard_bytes: 8 * MiB,
  /**
   * Concurrent connections the listener serves: the profile's 256 executors, each on its own
   * connection, beside 256 controllers of the registry's sessions.
   */
  connections: 512,
  /** Page size bounds of session.list and session.replay. */
  page_limit_max: 100,
  /** Bytes of encoded records one replay page may carry, so the result fits the payload limit. */
  replay_page_bytes: 30 * KiB,
  /** session.create title and initialize client fields. */
  title_bytes: 512,
  workspace_path_bytes: 4_096,
  client_field_bytes: 128,
  requested_capabilities: 32,
  /** From admission to publication of a registration; a capture that took longer is not published. */
  registration_deadline_ms: 30_000,
  /** How long shutdown waits for a capture still reading before exiting without it. */
  capture_drain_ms: 2_000,
  /** Longest resume secret a payload may present (issued ones are 43). */
  resume_secret_chars: 128,
} as const;

/**
 * Daemon-chosen bounds of the operation table (wire-v2 section 6), documented in docs/protocol.md section 6,
 * "Room for operations". A share is what one connection's mutations may hold; a recovery slot is the room
 * one session or executor has by right, beyond the table, for the methods a client recovers with; refusals
 * that changed nothing are kept apart.
 */
export const OPERATION_LIMITS = {
  /** Mutations running and outcomes retained in the table, and what their retention costs. */
  table_operations: 131_072,
  table_bytes: 64 * MiB,
  connection_operations: 32_768,
  connection_bytes: 16 * MiB,
  /**
   * Room a session's recovery methods, sent by its controller (a claim by anyone), use once the table or
   * their connection's share of it is full: a claim's snapshot (at most 24 KiB) ten times over.
   */
  session_slot_operations: 32,
  session_slot_bytes: 256 * KiB,
  /** The same for an executor's: its resumes and the results of a busy application's calls meanwhile. */
  executor_slot_operations: 512,
  executor_slot_bytes: 512 * KiB,
  /** Refusals that changed nothing; past either bound the oldest (of the connection, else of all) goes. */
  refusals: 16_384,
  connection_refusals: 1_024,
} as const;

/** application-resources.md, "Bounds" and "Callback bounds". */
export const PROFILE_LIMITS = {
  tools_per_session: 16,
  skills_per_session: 16,
  registry_bytes: 32 * KiB,
  combined_skill_bytes: 16 * KiB,
  retained_snapshots: 256,
  retained_entries: 1_024,
  retained_bytes: 8 * MiB,
  registry_sessions: 256,
  registry_idle_timeout_ms: 900_000,
  tool_source_bytes: 32 * KiB,
  skill_source_bytes: 16 * KiB,
  concurrent_captures: 1,
  capture_reservation_bytes: 128 * KiB,
  source_path_bytes: 1_024,
  name_bytes: 48,
  description_bytes: 512,
  schema_required_properties: 32,
  schema_property_name_bytes: 48,
  schema_string_max_length_min: 1,
  schema_string_max_length_max: 4_096,
  tool_timeout_ms_min: 1_000,
  tool_timeout_ms_max: 600_000,
  tool_timeout_ms_default: 120_000,
  executor_availability_timeout_ms: 60_000,
  executors: 256,
  executor_confirm_timeout_ms: 60_000,
  executor_rotation_timeout_ms: 60_000,
  executor_idle_timeout_ms: 900_000,
  calls: 32,
  calls_per_turn: 32,
  evidence_turns: 256,
  evidence_bytes_per_turn: 30 * KiB,
  call_payload_bytes: 30 * KiB,
  provider_call_id_bytes: 128,
  argument_bytes: 16 * KiB,
  result_bytes: 16 * KiB,
  error_message_bytes: 512,
  manifest_bytes: 18_000,
  assistant_text_bytes: 20_000,
} as const;

/** The daemon's bounds on one provider round; each is documented in docs/protocol.md, "Provider". */
export const PROVIDER_LIMITS = {
  /** Requests one round may make, the first included; a retry happens only before any output. */
  attempts: 5,
  backoff_base_ms: 500,
  backoff_cap_ms: 8_000,
  /** The fraction of a backoff delay that jitter may take off. */
  backoff_jitter: 0.25,
  /** A server's retry hint is followed up to this wait, and no further. */
  retry_hint_cap_ms: 30_000,
  /** Silence (not a byte, not even a keep-alive comment) after which a request is abandoned. */
  idle_timeout_ms: 120_000,
  /** The longest one request may last, however busy its stream. */
  request_deadline_ms: 1_800_000,
  /**
   * Bytes of body one request may take. Real providers frame every fragment of a few characters in an
   * event of its own: OpenAI's Chat Completions chunk around five characters of arguments takes 379 bytes,
   * its Responses event 258, Anthropic's Messages event 139. What a round keeps (`round_argument_bytes`
   * and `text_bytes`, 8.25 MiB) in fragments of four characters at 384 bytes an event is 792 MiB: the
   * bound is that, rounded up. What stays in memory has its own bounds below; the deadline bounds the time.
   */
  response_bytes: 1_024 * MiB,
  /** UTF-8 bytes of answer text one round may stream; past them the round fails as too large. */
  text_bytes: 256 * KiB,
  /**
   * UTF-8 bytes of one call's arguments as the model wrote them: the largest any tool accepts (a built-in
   * tool's, BUILTIN_LIMITS.argument_bytes). A call whose arguments pass it keeps none of them and is
   * answered to the model as `invalid_arguments`; the round goes on.
   */
  call_argument_bytes: 4 * MiB,
  /** UTF-8 bytes of arguments one round keeps, all its calls together; a call that would pass them is refused so. */
  round_argument_bytes: 8 * MiB,
  /**
   * Characters one server-sent event may take: room for a whole tool call in one event, as some servers
   * send them, with the largest arguments a built-in tool accepts (4 MiB, BUILTIN_LIMITS.argument_bytes)
   * escaped once more inside the chunk's JSON. That takes at most twice their bytes (quotes, backslashes
   * and white space are what JSON text escapes again), and three times for the half megabyte of written
   * text that may be non-ASCII where a server escapes that too: 8.5 MiB, and the chunk around it.
   */
  event_chars: 9 * MiB,
  /**
   * Characters of one event of the Responses API, whose `response.completed` event repeats the whole
   * output: the round's arguments (`round_argument_bytes`) escaped once more (twice their bytes), its text
   * escaped six-fold at worst, its carried reasoning (`carried_bytes`) and room around them: 24 MiB.
   */
  responses_event_chars: 24 * MiB,
  /**
   * UTF-8 bytes, as JSON, of the reasoning one round carries into the next round of its turn (encrypted
   * reasoning items, signed thinking blocks); past them the round fails as too large.
   */
  carried_bytes: 4 * MiB,
  /** Levels of arrays and objects one event's data may nest; a deeper event is a malformed stream. */
  event_nesting_depth: 64,
  /** Calls of one round the daemon runs; later ones are answered to the model with an error, unrun. */
  tool_calls_per_round: 64,
  /** Calls one round may ask for at all, answered or run; a round with more fails as too large. */
  listed_tool_calls_per_round: 1_024,
  /** Characters of one reasoning summary kept while it streams; the rest is dropped and it is truncated. */
  reasoning_summary_chars: 16_384,
} as const;

/** Daemon-chosen bounds of a turn the spec leaves open; each is documented in docs/protocol.md. */
export const TURN_LIMITS = {
  /** Model rounds one turn may run: a model that keeps calling tools ends the turn `limit_exceeded`. */
  provider_rounds: 16,
  /** Earlier turns of the session whose prompt and answer reach the provider as conversation. */
  context_turns: 20,
  /** UTF-8 bytes of the text of one `reasoning_summary` activity. */
  reasoning_summary_bytes: 4_096,
} as const;

/** Daemon-chosen bounds of the titles the daemon asks the provider for; documented in docs/protocol.md. */
export const TITLE_LIMITS = {
  /** UTF-8 bytes a stored title may take, after trimming; longer answers are cut between characters. */
  title_bytes: 80,
  /** From the request's start; at this deadline the request is aborted and the session keeps no title. */
  deadline_ms: 10_000,
  /** UTF-8 bytes of the first prompt, and of its answer, that the request carries. */
  excerpt_bytes: 2_000,
  /** Characters of answer read before the request is ended early: a title is one short line. */
  answer_chars: 1_024,
} as const;

/** Daemon-chosen bounds of the auth, catalog and settings methods; each is documented in docs/protocol.md. */
export const CONFIGURATION_LIMITS = {
  /** Characters of an API key `auth.login` accepts (visible ASCII only). */
  api_key_bytes: 512,
  /** Models the catalog keeps; a provider listing more is cut, and the catalog says it was. */
  catalog_models: 100,
  /** Bytes of a model id (visible ASCII only); a listed model with a longer or other id is skipped. */
  model_id_bytes: 128,
  /** Bytes of a model's `owned_by` (visible ASCII only); a longer or other one is shown as null. */
  model_owner_bytes: 64,
  /** Bytes of the provider's `GET /models` answer the daemon reads. */
  catalog_response_bytes: 1 * MiB,
  /** Levels of arrays and objects the settings file may nest (it is written again with its unknown members). */
  settings_nesting_depth: 64,
  /** Project pins the settings file may hold. */
  project_pins: 256,
} as const;
