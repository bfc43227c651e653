import t from 'tap';
import { configuredBuiltins } from '../../../core/agent/builtin-selection.js';

t.test(
  'reads, listing, search, plans, subagents and skills are on by default; nothing that writes, runs or fetches',
  async (t) => {
    t.same(configuredBuiltins({ enabled: [], disabled: [] }), [
      'read_file',
      'list_directory',
      'search_files',
      'update_plan',
      'spawn_agent',
      'load_skill',
    ]);
  },
);

t.test('enabled turns the others on, in the fixed order; web_search never', async (t) => {
  t.same(
    configuredBuiltins({
      enabled: ['web_fetch', 'run_command', 'write_file', 'edit_file', 'web_search'],
      disabled: [],
    }),
    [
      'read_file',
      'write_file',
      'edit_file',
      'list_directory',
      'search_files',
      'run_command',
      'web_fetch',
      'update_plan',
      'spawn_agent',
      'load_skill',
    ],
  );
});

t.test('disabled wins, whatever the case', async (t) => {
  t.same(
    configuredBuiltins({
      enabled: ['write_file', 'run_command'],
      disabled: ['RUN_COMMAND', 'Read_File', 'spawn_agent'],
    }),
    ['write_file', 'list_directory', 'search_files', 'update_plan', 'load_skill'],
  );
});
