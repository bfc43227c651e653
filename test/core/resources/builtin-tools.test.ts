import t from 'tap';
import { BUILTIN_TOOL_NAMES } from '../../../core/resources/builtin-tools.js';
import { isValidResourceName } from '../../../core/resources/names.js';

t.test('the built-in tool names are a frozen list of distinct lowercase resource-shaped names', async (t) => {
  t.ok(Object.isFrozen(BUILTIN_TOOL_NAMES));
  t.ok(BUILTIN_TOOL_NAMES.length > 0);
  t.equal(new Set(BUILTIN_TOOL_NAMES).size, BUILTIN_TOOL_NAMES.length);
  for (const name of BUILTIN_TOOL_NAMES) {
    t.ok(isValidResourceName(name), name);
    t.notOk(name.startsWith('mcp_'), name);
  }
  for (const name of ['read_file', 'write_file', 'edit_file', 'run_command', 'spawn_agent']) {
    t.ok((BUILTIN_TOOL_NAMES as readonly string[]).includes(name), name);
  }
});
