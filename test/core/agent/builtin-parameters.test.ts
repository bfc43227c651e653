import t from 'tap';
import { Compile } from 'typebox/compile';
import { SKILL_PARAMETERS } from '../../../core/agent/builtin-parameters.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';

const skill = Compile(SKILL_PARAMETERS);

t.test('load_skill takes a name, and a path, an offset and a length like read_file', async (t) => {
  t.ok(skill.Check({ name: 'pdf' }));
  t.ok(skill.Check({ name: 'pdf', path: 'reference/forms.md', offset: 0, length: 1 }));
  t.notOk(skill.Check({}), 'a name is required');
  t.notOk(skill.Check({ name: '' }));
  t.notOk(skill.Check({ name: 'pdf', path: '' }));
  t.notOk(skill.Check({ name: 'pdf', offset: -1 }));
  t.notOk(skill.Check({ name: 'pdf', length: 0 }));
  t.notOk(skill.Check({ name: 'pdf', other: 1 }), 'nothing else');
});

t.test('each bound of load_skill, at it and one past it', async (t) => {
  const max = WORKSPACE_TOOL_LIMITS.read_length_max;
  t.ok(skill.Check({ name: 'pdf', length: max }));
  t.notOk(skill.Check({ name: 'pdf', length: max + 1 }));
  const path = WORKSPACE_TOOL_LIMITS.path_chars_max;
  t.ok(skill.Check({ name: 'pdf', path: 'p'.repeat(path) }));
  t.notOk(skill.Check({ name: 'pdf', path: 'p'.repeat(path + 1) }));
  t.ok(skill.Check({ name: 'n'.repeat(255) }));
  t.notOk(skill.Check({ name: 'n'.repeat(256) }));
  t.ok(skill.Check({ name: 'pdf', offset: Number.MAX_SAFE_INTEGER }));
  t.notOk(skill.Check({ name: 'pdf', offset: Number.MAX_SAFE_INTEGER + 2 }));
});
