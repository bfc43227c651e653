/** Daemon-chosen bounds of the built-in tools; each is documented in docs/protocol.md, "Built-in tools". */
export const BUILTIN_LIMITS = {
  /** UTF-8 bytes of the text one built-in call gives the model; a tool that would give more fails instead. */
  output_bytes: 32_768,
  /** Built-in calls one turn may make, its subagents' included; later ones are refused to the model. */
  calls_per_turn: 128,
  /**
   * Steps of a plan; characters of one step's text (Unicode scalar values, as the schema counts them); and
   * UTF-8 bytes of the whole plan as shown, encoded as compact JSON, so that its activity fits a payload.
   */
  plan_steps: 32,
  plan_step_chars: 256,
  plan_bytes: 30_720,
  /** Characters of a subagent's task, rounds of its loop, and UTF-8 bytes of its answer kept for the parent. */
  subagent_task_chars: 8_192,
  subagent_rounds: 8,
  subagent_answer_bytes: 16_384,
} as const;
