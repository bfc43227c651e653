import t from 'tap';
import { MCP_LIMITS } from '../../../core/mcp/mcp-limits.js';
import { exceedsDepth, ToolAdmission } from '../../../core/mcp/tool-admission.js';

const SCHEMA = { type: 'object', properties: { text: { type: 'string' } } };

function admit(tools: unknown[], server = 'srv', configured: string[] = [server]): ToolAdmission {
  const admission = new ToolAdmission(server, configured);
  admission.add(tools);
  return admission;
}

/** A schema nesting objects `levels` deep, itself the first level. */
function nested(levels: number): Record<string, unknown> {
  let inner: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) inner = { p: inner };
  return { ...inner, type: 'object' };
}

t.test('a fit tool is offered under its prefixed name with its description and schema', async (t) => {
  const admission = admit([{ name: 'echo', description: 'Echoes.', inputSchema: SCHEMA }]);
  t.same(admission.tools, [
    { name: 'mcp_srv_echo', server: 'srv', tool: 'echo', description: 'Echoes.', inputSchema: SCHEMA },
  ]);
  t.same(admission.skipped, []);
  t.equal(
    admit([{ name: 'echo', inputSchema: SCHEMA }]).tools[0]?.description,
    '',
    'no description is empty',
  );
});

t.test('a description is cut to its bound between characters', async (t) => {
  const description = `a${'é'.repeat(300)}`;
  const [tool] = admit([{ name: 'echo', description, inputSchema: SCHEMA }]).tools;
  t.equal(Buffer.byteLength(tool!.description), MCP_LIMITS.description_bytes - 1);
  t.equal(tool!.description, `a${'é'.repeat(255)}`);
  const lone = admit([{ name: 'echo', description: 'x\ud800y', inputSchema: SCHEMA }]).tools[0]!.description;
  t.equal(lone, 'x\ufffdy', 'a lone surrogate is not passed on');
});

t.test('the prefixed name takes at most 48 bytes', async (t) => {
  const fits = 'a'.repeat(MCP_LIMITS.name_bytes - 'mcp_srv_'.length);
  t.equal(admit([{ name: fits, inputSchema: SCHEMA }]).tools[0]?.name.length, MCP_LIMITS.name_bytes);
  t.same(admit([{ name: `${fits}a`, inputSchema: SCHEMA }]).skipped, ['name_too_long']);
});

t.test('a prefixed name outside [a-z][a-z0-9_]* is skipped', async (t) => {
  for (const name of ['Echo', 'get-weather', 'café', 'a b', 'dot.ted']) {
    t.same(admit([{ name, inputSchema: SCHEMA }]).skipped, ['name_invalid'], name);
  }
  t.same(admit([{ name: 'get_weather_2', inputSchema: SCHEMA }]).skipped, []);
});

t.test('a malformed tool entry is skipped', async (t) => {
  const entries: unknown[] = [
    null,
    'echo',
    [],
    { inputSchema: SCHEMA },
    { name: 7, inputSchema: SCHEMA },
    { name: '', inputSchema: SCHEMA },
    { name: 'echo', description: 7, inputSchema: SCHEMA },
  ];
  const admission = admit(entries);
  t.same(admission.tools, []);
  t.same(admission.skipped, Array(entries.length).fill('tool_invalid'));
});

t.test('a second tool with the same name is skipped', async (t) => {
  const admission = admit([
    { name: 'echo', description: 'first', inputSchema: SCHEMA },
    { name: 'echo', description: 'second', inputSchema: SCHEMA },
  ]);
  t.same(
    admission.tools.map((tool) => tool.description),
    ['first'],
  );
  t.same(admission.skipped, ['duplicate_name']);
});

t.test('a name another configured server could own is left to it', async (t) => {
  const configured = ['a', 'a_b', 'ab'];
  const short = admit(
    [
      { name: 'b_c', inputSchema: SCHEMA },
      { name: 'bc', inputSchema: SCHEMA },
      { name: 'b', inputSchema: SCHEMA },
    ],
    'a',
    configured,
  );
  t.same(
    short.tools.map((tool) => tool.name),
    ['mcp_a_bc', 'mcp_a_b'],
  );
  t.same(short.skipped, ['ambiguous_name']);
  t.same(
    admit([{ name: 'c', inputSchema: SCHEMA }], 'a_b', configured).tools.map((tool) => tool.name),
    ['mcp_a_b_c'],
    'the longer server name keeps it',
  );
});

t.test('the input schema must be an object schema', async (t) => {
  for (const inputSchema of [undefined, null, 'object', [], { type: 'string' }, { properties: {} }]) {
    t.same(admit([{ name: 'echo', inputSchema }]).skipped, ['schema_invalid'], JSON.stringify(inputSchema));
  }
});

t.test('the input schema nests at most 64 levels', async (t) => {
  t.same(admit([{ name: 'echo', inputSchema: nested(MCP_LIMITS.schema_depth) }]).skipped, []);
  t.same(admit([{ name: 'echo', inputSchema: nested(MCP_LIMITS.schema_depth + 1) }]).skipped, [
    'schema_too_deep',
  ]);
  t.same(
    admit([{ name: 'echo', inputSchema: nested(100_000) }]).skipped,
    ['schema_too_deep'],
    'very deep too',
  );
});

t.test('the input schema takes at most 32 KiB encoded', async (t) => {
  const frame = JSON.stringify({ type: 'object', description: '' }).length;
  const sized = (bytes: number) => ({ type: 'object', description: 'x'.repeat(bytes - frame) });
  t.same(admit([{ name: 'echo', inputSchema: sized(MCP_LIMITS.schema_bytes) }]).skipped, []);
  t.same(admit([{ name: 'echo', inputSchema: sized(MCP_LIMITS.schema_bytes + 1) }]).skipped, [
    'schema_too_large',
  ]);
});

t.test('at most 64 tools are taken, across pages; the rest are counted as left over', async (t) => {
  const tools = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ name: `tool_${from + i}`, inputSchema: SCHEMA }));
  const admission = new ToolAdmission('srv', ['srv']);
  t.equal(admission.add([{ name: 'Bad', inputSchema: SCHEMA }, ...tools(0, 60)]), 0);
  t.notOk(admission.full);
  t.equal(admission.add(tools(60, 10)), 6);
  t.ok(admission.full);
  t.equal(admission.tools.length, MCP_LIMITS.tools_per_server);
  t.equal(admission.tools.at(-1)?.name, 'mcp_srv_tool_63');
  t.same(admission.skipped, ['name_invalid'], 'an unfit tool does not take a place');
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
