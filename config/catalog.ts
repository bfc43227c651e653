import { BUILTIN_TOOL_NAMES } from '../core/resources/builtin-tools.js';
import { NameCatalog } from '../core/resources/names.js';
import type { DaemonConfig } from './config-file.js';

/**
 * The names application resources may not take: the built-in tools, the `mcp_` namespace, every skill
 * discovered at startup (disabled or not) and every configured disabled skill or tool name.
 */
export function catalogOf(config: DaemonConfig, discoveredSkills: readonly string[]): NameCatalog {
  return new NameCatalog({
    builtinTools: BUILTIN_TOOL_NAMES,
    discoveredSkills,
    disabledNames: [...config.skills.disabled, ...config.tools.disabled],
  });
}
