import { TOOL_RESULT_LIMITS } from '../tool-results/result-limits.js';

/** Daemon-chosen bounds of the built-in tools; each is documented in docs/protocol.md, "Built-in tools". */
export const BUILTIN_LIMITS = {
  output_bytes: TOOL_RESULT_LIMITS.output_bytes,
  /**
   * UTF-8 bytes of a built-in call's arguments as the model sent them; longer ones are refused to the model
   * as `invalid_arguments`. Room for the largest arguments the schemas accept however they are escaped:
   * edit_file's two texts of 262,144 bytes each (WORKSPACE_TOOL_LIMITS.write_bytes_max), every byte written
   * as a six-byte `\u` escape as JSON allows (3 MiB), with the path and the members' names. The written
   * content's own bound is the tools' (262,144 bytes), the same in their schemas.
   */
  argument_bytes: 4 * 1024 * 1024,
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
