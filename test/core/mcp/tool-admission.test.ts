import t from 'tap';
import { MCP_LIMITS } from '../../../core/mcp/mcp-limits.js';
import { exceedsDepth, ToolAdmission, type ToolSelection } from '../../../core/mcp/tool-admission.js';
import { hashedName, MODEL_TOOL_NAME } from '../../../core/mcp/tool-names.js';

const SCHEMA = { type: 'object', properties: { text: { type: 'string' } } };
const ALL: ToolSelection = { enabled: null, disabled: [] };

function admit(
  tools: unknown[],
  server = 'srv',
  configured: string[] = [server],
  selection: ToolSelection = ALL,
): ToolAdmission {
  const admission = new ToolAdmission(server, configured, selection);
  admission.add(tools);
  return admission;
}

const namesOf = (admission: ToolAdmission) => admission.tools().map((tool) => tool.name);
const tool = (name: string) => ({ name, inputSchema: SCHEMA });

/** A schema nesting objects `levels` deep, itself the first level. */
function nested(levels: number): Record<string, unknown> {
  let inner: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) inner = { p: inner };
  return { ...inner, type: 'object' };
}

t.test('a fit tool is offered under its prefixed name with its description and schema', async (t) => {
  const admission = admit([{ name: 'echo', description: 'Echoes.', inputSchema: SCHEMA }]);
  t.same(admission.tools(), [
    { name: 'mcp_srv_echo', server: 'srv', tool: 'echo', description: 'Echoes.', inputSchema: SCHEMA },
  ]);
  t.same(admission.skipped, []);
  t.equal(admit([tool('echo')]).tools()[0]?.description, '', 'no description is empty');
});

t.test('a description is cut to 2,048 bytes between characters', async (t) => {
  t.equal(MCP_LIMITS.description_bytes, 2_048);
  const exact = 'd'.repeat(MCP_LIMITS.description_bytes);
  t.equal(admit([{ ...tool('echo'), description: exact }]).tools()[0]!.description, exact, 'at the bound');
  const over = `a${'é'.repeat(MCP_LIMITS.description_bytes / 2)}`;
  const [cut] = admit([{ ...tool('echo'), description: over }]).tools();
  t.equal(Buffer.byteLength(cut!.description), MCP_LIMITS.description_bytes - 1, 'never half a character');
  t.equal(cut!.description, `a${'é'.repeat(MCP_LIMITS.description_bytes / 2 - 1)}`);
  const lone = admit([{ ...tool('echo'), description: 'x\ud800y' }]).tools()[0]!.description;
  t.equal(lone, 'x\ufffdy', 'a lone surrogate is not passed on');
});

t.test('hyphens and capitals are kept; other characters are replaced by _', async (t) => {
  const names = [
    'get-sum',
    'API-post-search',
    'Shout',
    'run-code',
    'café',
    'a b',
    'dot.ted',
    '路径/读',
    '😀x',
  ];
  const admission = admit(names.map(tool));
  t.same(namesOf(admission), [
    'mcp_srv_get-sum',
    'mcp_srv_API-post-search',
    'mcp_srv_Shout',
    'mcp_srv_run-code',
    'mcp_srv_caf_',
    'mcp_srv_a_b',
    'mcp_srv_dot_ted',
    'mcp_srv_____',
    'mcp_srv__x',
  ]);
  t.same(
    admission.tools().map((admitted) => admitted.tool),
    names,
    'each called by its raw name',
  );
  t.ok(namesOf(admission).every((name) => MODEL_TOOL_NAME.test(name)));
  t.same(admission.skipped, []);
});

t.test('a server key is made to fit the same way', async (t) => {
  t.same(namesOf(admit([tool('echo')], 'sequential-thinking')), ['mcp_sequential-thinking_echo']);
  t.same(namesOf(admit([tool('echo')], 'notionApi')), ['mcp_notionApi_echo']);
  t.same(namesOf(admit([tool('echo')], 'my server.v2')), ['mcp_my_server_v2_echo']);
});

t.test('a name up to 64 bytes is kept; a longer one is cut and given a stable hash', async (t) => {
  const fits = 'a'.repeat(MCP_LIMITS.name_bytes - 'mcp_srv_'.length);
  t.same(namesOf(admit([tool(fits)])), [`mcp_srv_${fits}`], 'exactly 64 bytes');
  const [hashed] = namesOf(admit([tool(`${fits}b`)]));
  t.equal(hashed!.length, MCP_LIMITS.name_bytes, 'cut to the bound');
  t.match(hashed, /^mcp_srv_a+_[0-9a-f]{8}$/);
  t.equal(hashed, hashedName('srv', `${fits}b`));
  t.equal(namesOf(admit([tool(`${fits}b`)]))[0], hashed, 'the same every time');
  t.not(namesOf(admit([tool(`${fits}c`)]))[0], hashed, 'another tool, another hash');
  const key = 'k'.repeat(MCP_LIMITS.server_name_characters);
  const [fromLongKey] = namesOf(admit([tool('echo')], key));
  t.equal(fromLongKey!.length, MCP_LIMITS.name_bytes, 'a 64-character key fits too');
  t.ok(MODEL_TOOL_NAME.test(fromLongKey!) && fromLongKey!.startsWith('mcp_k'));
});

t.test('a tool name is at most 512 bytes as its server gives it', async (t) => {
  const exact = 'n'.repeat(MCP_LIMITS.tool_name_bytes);
  t.same(admit([tool(exact)]).skipped, [], 'at the bound');
  t.same(admit([tool(`${exact}n`)]).skipped, [{ tool: exact, reason: 'name_too_long' }], 'named, cut');
});

t.test('tools of one server made alike by the replacement: the replaced ones are hashed', async (t) => {
  for (const order of [
    ['a_b', 'a.b', 'a b'],
    ['a.b', 'a b', 'a_b'],
  ]) {
    const admission = admit(order.map(tool));
    const byTool = new Map(admission.tools().map((admitted) => [admitted.tool, admitted.name]));
    t.equal(byTool.get('a_b'), 'mcp_srv_a_b', `${order}: the clean name keeps its name`);
    t.equal(byTool.get('a.b'), hashedName('srv', 'a.b'));
    t.equal(byTool.get('a b'), hashedName('srv', 'a b'));
    t.equal(new Set(byTool.values()).size, 3, 'all apart');
  }
  t.same(namesOf(admit([tool('a.b')])), ['mcp_srv_a_b'], 'alone it keeps the plain name');
});

t.test('a second tool with the same raw name is skipped, named', async (t) => {
  const admission = admit([
    { name: 'echo', description: 'first', inputSchema: SCHEMA },
    { name: 'echo', description: 'second', inputSchema: SCHEMA },
  ]);
  t.same(
    admission.tools().map((admitted) => admitted.description),
    ['first'],
  );
  t.same(admission.skipped, [{ tool: 'echo', reason: 'duplicate_name' }]);
});

t.test('a name another configured server could own is hashed, whichever starts first', async (t) => {
  const configured = ['a', 'a_b', 'ab'];
  const short = admit([tool('b_c'), tool('bc'), tool('b')], 'a', configured);
  t.same(namesOf(short), [hashedName('a', 'b_c'), 'mcp_a_bc', 'mcp_a_b']);
  t.same(namesOf(admit([tool('c')], 'a_b', configured)), ['mcp_a_b_c'], 'the longer server keeps it');
  const alike = ['my server', 'my_server'];
  const first = namesOf(admit([tool('echo')], 'my server', alike));
  const second = namesOf(admit([tool('echo')], 'my_server', alike));
  t.same(first, [hashedName('my server', 'echo')], 'keys made alike: both hashed');
  t.same(second, [hashedName('my_server', 'echo')]);
  t.not(first[0], second[0]);
});

t.test('enabled_tools and disabled_tools choose by raw name, without warnings', async (t) => {
  const tools = ['one', 'two', 'three'].map(tool);
  t.same(namesOf(admit(tools, 'srv', ['srv'], { enabled: ['one', 'three'], disabled: [] })), [
    'mcp_srv_one',
    'mcp_srv_three',
  ]);
  const off = admit(tools, 'srv', ['srv'], { enabled: null, disabled: ['two'] });
  t.same(namesOf(off), ['mcp_srv_one', 'mcp_srv_three']);
  t.same(off.skipped, []);
  t.same(namesOf(admit(tools, 'srv', ['srv'], { enabled: ['one', 'two'], disabled: ['one'] })), [
    'mcp_srv_two',
  ]);
});

t.test('a malformed tool entry is skipped', async (t) => {
  const entries: unknown[] = [
    null,
    'echo',
    [],
    { inputSchema: SCHEMA },
    { name: 7, inputSchema: SCHEMA },
    tool(''),
  ];
  const admission = admit([...entries, { name: 'echo', description: 7, inputSchema: SCHEMA }]);
  t.same(admission.tools(), []);
  t.same(admission.skipped, [
    ...Array(entries.length).fill({ tool: null, reason: 'tool_invalid' }),
    { tool: 'echo', reason: 'tool_invalid' },
  ]);
});

t.test('the input schema must be an object schema', async (t) => {
  for (const inputSchema of [undefined, null, 'object', [], { type: 'string' }, { properties: {} }]) {
    t.same(
      admit([{ name: 'echo', inputSchema }]).skipped,
      [{ tool: 'echo', reason: 'schema_invalid' }],
      JSON.stringify(inputSchema),
    );
  }
});

t.test('the input schema nests at most 64 levels', async (t) => {
  t.same(admit([{ name: 'echo', inputSchema: nested(MCP_LIMITS.schema_depth) }]).skipped, []);
  t.same(admit([{ name: 'echo', inputSchema: nested(MCP_LIMITS.schema_depth + 1) }]).skipped, [
    { tool: 'echo', reason: 'schema_too_deep' },
  ]);
  t.same(
    admit([{ name: 'echo', inputSchema: nested(100_000) }]).skipped,
    [{ tool: 'echo', reason: 'schema_too_deep' }],
    'very deep too',
  );
});

t.test('the input schema takes at most 32 KiB encoded', async (t) => {
  const frame = JSON.stringify({ type: 'object', description: '' }).length;
  const sized = (bytes: number) => ({ type: 'object', description: 'x'.repeat(bytes - frame) });
  t.same(admit([{ name: 'echo', inputSchema: sized(MCP_LIMITS.schema_bytes) }]).skipped, []);
  t.same(admit([{ name: 'echo', inputSchema: sized(MCP_LIMITS.schema_bytes + 1) }]).skipped, [
    { tool: 'echo', reason: 'schema_too_large' },
  ]);
});

t.test('at most 64 tools are taken, across pages; the rest are counted as left over', async (t) => {
  const tools = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => tool(`tool_${from + i}`));
  const admission = new ToolAdmission('srv', ['srv'], ALL);
  t.equal(admission.add([{ name: 'Bad', inputSchema: {} }, ...tools(0, 60)]), 0);
  t.notOk(admission.full);
  t.equal(admission.add(tools(60, 10)), 6);
  t.ok(admission.full);
  t.equal(admission.tools().length, MCP_LIMITS.tools_per_server);
  t.equal(admission.tools().at(-1)?.name, 'mcp_srv_tool_63');
  t.same(admission.skipped, [{ tool: 'Bad', reason: 'schema_invalid' }], 'an unfit tool takes no place');
});

t.test('depth is measured on arrays and objects alike, without recursion', async (t) => {
  t.equal(exceedsDepth({}, 1), false);
  t.equal(exceedsDepth({ a: [] }, 1), true);
  t.equal(exceedsDepth({ a: [1, 'x', null] }, 2), false);
  t.equal(exceedsDepth({ a: [[{}]] }, 3), true);
  let deep: unknown[] = [];
  for (let i = 0; i < 200_000; i++) deep = [deep];
  t.equal(exceedsDepth(deep, 64), true);
});
