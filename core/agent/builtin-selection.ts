import {
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  DEFAULT_BUILTIN_TOOLS,
} from '../resources/builtin-tools.js';

/**
 * The built-in tools the configuration asks for, in their fixed order: those on by default and those
 * `enabled` names, less every name `disabled` holds (compared case-insensitively, as the catalog reserves
 * them): disabled wins. `web_search` is never among them.
 */
export function configuredBuiltins(tools: {
  enabled: readonly string[];
  disabled: readonly string[];
}): BuiltinToolName[] {
  const disabled = new Set(tools.disabled.map((name) => name.toLowerCase()));
  const wanted = new Set<string>([...DEFAULT_BUILTIN_TOOLS, ...tools.enabled]);
  return BUILTIN_TOOL_NAMES.filter(
    (name) => name !== 'web_search' && wanted.has(name) && !disabled.has(name),
  );
}
