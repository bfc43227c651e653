/** What every daemon tool's result is held to, whichever tool made it (docs/protocol.md, "Built-in tools"). */
export const TOOL_RESULT_LIMITS = {
  /** UTF-8 bytes of the text one built-in call gives the model; a tool that would give more fails instead. */
  output_bytes: 32_768,
} as const;
