import t from 'tap';
import { WireError } from '../../../core/errors.js';
import { BUILTIN_TOOL_NAMES } from '../../../core/resources/builtin-tools.js';
import {
  isValidResourceDescription,
  isValidResourceName,
  NameCatalog,
} from '../../../core/resources/names.js';

t.test('resource names are [a-z][a-z0-9_]* of at most 48 bytes', async (t) => {
  for (const name of ['a', 'z9', 'lookup_order', 'a_', 'a__b', `a${'b'.repeat(47)}`]) {
    t.ok(isValidResourceName(name), name);
  }
  const refused: unknown[] = [
    '',
    '1a',
    '_a',
    'A',
    'lookUp',
    'a-b',
    'a b',
    'a.b',
    'é',
    'a\u0000',
    'a\n',
    `a${'b'.repeat(48)}`,
    null,
    undefined,
    1,
    ['a'],
  ];
  for (const name of refused) t.notOk(isValidResourceName(name), JSON.stringify(name));
});

t.test('descriptions are well-formed text of at most 512 UTF-8 bytes without NUL', async (t) => {
  for (const description of [
    '',
    'Look up an order',
    'Grüße – 日本語 🙂',
    'two\nlines\ttab',
    'x'.repeat(512),
  ]) {
    t.ok(isValidResourceDescription(description), description.slice(0, 20));
  }
  t.ok(isValidResourceDescription('é'.repeat(256)), '512 bytes of two-byte characters');
  t.notOk(isValidResourceDescription(`${'é'.repeat(256)}x`), '513 bytes');
  t.notOk(isValidResourceDescription(`${'🙂'.repeat(128)}x`), 'counted in bytes, not characters');
  t.notOk(isValidResourceDescription('x'.repeat(513)));
  t.notOk(isValidResourceDescription('a\u0000b'));
  t.notOk(isValidResourceDescription('lone \ud800'));
  t.notOk(isValidResourceDescription(null));
  t.notOk(isValidResourceDescription(5));
});

t.test('the catalog reserves every built-in tool name by default', async (t) => {
  const catalog = new NameCatalog();
  for (const name of BUILTIN_TOOL_NAMES) {
    t.equal(catalog.reservation(name), 'builtin_tool', name);
    t.ok(catalog.isReserved(name));
  }
  t.equal(catalog.reservation('lookup_order'), null);
  t.notOk(catalog.isReserved('lookup_order'));
});

t.test('the whole mcp_ namespace is reserved, in any case', async (t) => {
  const catalog = new NameCatalog({ builtinTools: [] });
  for (const name of ['mcp_', 'mcp_x', 'mcp__server__tool', 'MCP_x', 'Mcp_files']) {
    t.equal(catalog.reservation(name), 'mcp', name);
  }
  for (const name of ['mcp', 'mcpx', 'my_mcp_tool', 'xmcp_']) t.equal(catalog.reservation(name), null, name);
});

t.test('discovered skills and disabled names are reserved case-insensitively', async (t) => {
  const catalog = new NameCatalog({
    builtinTools: ['Read_File'],
    discoveredSkills: ['Code_Review', 'release_notes'],
    disabledNames: new Set(['WEB_SEARCH', 'old_skill']),
  });
  t.equal(catalog.reservation('read_file'), 'builtin_tool');
  t.equal(catalog.reservation('code_review'), 'discovered_skill');
  t.equal(catalog.reservation('RELEASE_NOTES'), 'discovered_skill');
  t.equal(catalog.reservation('web_search'), 'disabled_name');
  t.equal(catalog.reservation('Old_Skill'), 'disabled_name');
  t.equal(catalog.reservation('write_file'), null, 'an explicit built-in list replaces the default');
  t.equal(catalog.reservation('code_reviews'), null);
});

t.test('a reserved name is refused with conflict and a fixed message', async (t) => {
  const catalog = new NameCatalog({ disabledNames: ['secret_tool'] });
  const error = t.throws(() => catalog.assertAvailable('secret_tool')) as WireError;
  t.ok(error instanceof WireError);
  t.same(error.toJSON(), { code: 'conflict', message: 'the resource name is reserved' });
  t.throws(() => catalog.assertAvailable('mcp_x'), { code: 'conflict' });
  t.throws(() => catalog.assertAvailable('run_command'), { code: 'conflict' });
  t.doesNotThrow(() => catalog.assertAvailable('lookup_order'));
});
