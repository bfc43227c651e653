/**
 * The daemon's own agent tools, by the names the model sees. Application resources share this namespace,
 * so these names can never be registered.
 */
export const BUILTIN_TOOL_NAMES = Object.freeze([
  'read_file',
  'write_file',
  'edit_file',
  'list_directory',
  'search_files',
  'run_command',
  'web_fetch',
  'web_search',
  'update_plan',
  'spawn_agent',
  'load_skill',
] as const);

export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/**
 * Offered to the model unless the configuration disables them: none of them changes anything outside
 * (`load_skill` only where skills are installed).
 */
export const DEFAULT_BUILTIN_TOOLS = Object.freeze([
  'read_file',
  'list_directory',
  'search_files',
  'update_plan',
  'spawn_agent',
  'load_skill',
] as const satisfies readonly BuiltinToolName[]);

/** Offered only when `config.json` lists them in `tools.enabled`: they write, run or reach the network. */
export const OPT_IN_BUILTIN_TOOLS = Object.freeze([
  'write_file',
  'edit_file',
  'run_command',
  'web_fetch',
] as const satisfies readonly BuiltinToolName[]);

/** What `tools.enabled` may name: every tool but the reserved `web_search`, which the daemon does not provide. */
export const ENABLEABLE_BUILTIN_TOOLS = Object.freeze([...DEFAULT_BUILTIN_TOOLS, ...OPT_IN_BUILTIN_TOOLS]);
