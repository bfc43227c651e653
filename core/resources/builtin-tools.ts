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
] as const);

export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];
