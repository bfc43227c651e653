import t from 'tap';
import { MCP_CALL_MESSAGES, MCP_LIMITS } from '../../../core/mcp/mcp-servers.js';
import { exceedsDepth } from '../../../core/mcp/tool-admission.js';
import { ECHO_DESCRIPTION, LONG_TOOL_NAME, STDERR_SECRET } from '../../fixtures/mcp-server-constants.js';
import {
  alive,
  fixtureServer,
  harness,
  neverAborted,
  noted,
  startedPids,
  stateOf,
  untilState,
} from './mcp-fixture.js';

t.test(
  'a ready server offers its tools with the mcp_ prefix, its descriptions and its schemas',
  async (t) => {
    const { mcp } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
    t.same(mcp.status(), [{ name: 'files', state: 'starting', tools: 0 }], 'start returns at once');
    t.same(mcp.tools(), []);
    await untilState(mcp, 'files', 'ready');

    const tools = mcp.tools();
    t.same(
      tools.map((tool) => tool.name),
      [
        'mcp_files_echo',
        'mcp_files_slow',
        'mcp_files_freeze',
        'mcp_files_crash',
        'mcp_files_whoami',
        'mcp_files_parts',
        'mcp_files_big',
        'mcp_files_flood',
      ],
      'in the server order, the unfit tools left out',
    );
    const echo = tools[0]!;
    t.equal(echo.server, 'files');
    t.equal(echo.tool, 'echo');
    t.equal(echo.description, ECHO_DESCRIPTION);
    t.match(echo.inputSchema, {
      type: 'object',
      properties: { text: { type: 'string', description: 'What to echo' } },
      required: ['text'],
    });
    t.same(mcp.status(), [{ name: 'files', state: 'ready', tools: 8 }]);
  },
);

t.test('a call reaches the server and its result comes back', async (t) => {
  const { mcp } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  t.same(await mcp.call('mcp_files_echo', { text: 'hello, wörld' }, neverAborted()), {
    ok: true,
    output: '{"content":"hello, wörld","is_error":false,"truncated":false}',
  });
});

t.test('non-text parts become placeholders and the error flag is passed on', async (t) => {
  const { mcp } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  t.same(await mcp.call('mcp_files_parts', {}, neverAborted()), {
    ok: true,
    output: '{"content":"first\\n[image]\\n[audio]\\nlast","is_error":true,"truncated":false}',
  });
});

t.test('a long result is cut to the output bound on a character boundary', async (t) => {
  const { mcp } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  const outcome = await mcp.call('mcp_files_big', {}, neverAborted());
  if (!outcome.ok) throw new Error(`the call failed: ${outcome.code}`);
  t.ok(Buffer.byteLength(outcome.output) <= MCP_LIMITS.output_bytes, 'within the bound');
  t.ok(Buffer.byteLength(outcome.output) > MCP_LIMITS.output_bytes - 2, 'filled up to a character');
  const parsed = JSON.parse(outcome.output) as { content: string; is_error: boolean; truncated: boolean };
  t.equal(parsed.truncated, true);
  t.equal(parsed.is_error, false);
  t.match(parsed.content, /^é+$/, 'no character split');
});

t.test('tools over the name or schema bounds are skipped with warnings naming only the server', async (t) => {
  const { mcp, warnings } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  t.ok(Buffer.byteLength(`mcp_files_${LONG_TOOL_NAME}`) > MCP_LIMITS.name_bytes, 'the fixture name is over');
  t.same(
    warnings.map((warning) => warning.fields),
    [
      { server: 'files', reason: 'name_too_long' },
      { server: 'files', reason: 'name_invalid' },
      { server: 'files', reason: 'schema_too_large' },
      { server: 'files', reason: 'schema_too_deep' },
    ],
  );
  t.ok(warnings.every((warning) => warning.message === 'MCP server tool skipped'));
  const logged = JSON.stringify(warnings);
  for (const word of [LONG_TOOL_NAME, 'Shout', 'Has a', 'field_', 'inner'])
    t.notOk(logged.includes(word), word);
});

t.test('a server listing more tools than the bound offers the first ones and warns once', async (t) => {
  const { mcp, warnings } = harness(t, (notes) => ({ lots: fixtureServer('many', notes('lots')) }));
  await untilState(mcp, 'lots', 'ready');
  const names = mcp.tools().map((tool) => tool.name);
  t.equal(names.length, MCP_LIMITS.tools_per_server);
  t.equal(names[0], 'mcp_lots_tool_00');
  t.equal(names.at(-1), 'mcp_lots_tool_63');
  t.same(warnings, [
    {
      fields: { server: 'lots', reason: 'too_many_tools' },
      message: 'MCP server tools over the limit skipped',
    },
  ]);
});

t.test(
  'the child gets its configured environment and start directory, not the daemon environment',
  async (t) => {
    process.env.MAGI_API_KEY = 'sk-test-never-shown';
    t.teardown(() => {
      delete process.env.MAGI_API_KEY;
    });
    const { mcp, home } = harness(t, (notes) => ({
      files: fixtureServer('normal', notes('files'), {
        env: { FIXTURE_NOTES: notes('files'), FIXTURE_GREETING: 'hi' },
      }),
    }));
    await untilState(mcp, 'files', 'ready');
    const outcome = await mcp.call('mcp_files_whoami', {}, neverAborted());
    if (!outcome.ok) throw new Error(`the call failed: ${outcome.code}`);
    const seen = JSON.parse((JSON.parse(outcome.output) as { content: string }).content) as Record<
      string,
      unknown
    >;
    t.equal(seen.sees_api_key, false, 'the API key stays with the daemon');
    t.equal(seen.greeting, 'hi', 'the configured env is passed');
    t.equal(seen.cwd, home);
  },
);

t.test(
  'a server that writes garbage on stdout and floods stderr still serves, and nothing it wrote is logged',
  async (t) => {
    const { mcp, warnings } = harness(t, (notes) => ({ noisy: fixtureServer('noisy', notes('noisy')) }));
    await untilState(mcp, 'noisy', 'ready');
    t.same(await mcp.call('mcp_noisy_echo', { text: 'still here' }, neverAborted()), {
      ok: true,
      output: '{"content":"still here","is_error":false,"truncated":false}',
    });
    t.notOk(JSON.stringify(warnings).includes(STDERR_SECRET));
  },
);

t.test('calls outside the ready tools are refused without reaching a server', async (t) => {
  const { mcp, notes } = harness(t, (notes) => ({
    files: fixtureServer('normal', notes('files')),
    off: fixtureServer('normal', notes('off'), { enabled: false }),
  }));
  await untilState(mcp, 'files', 'ready');
  t.equal(stateOf(mcp, 'off'), 'stopped', 'a disabled server is never started');
  t.same(startedPids(notes('off')), [], 'its command never ran');
  t.match(await mcp.call('mcp_off_echo', { text: 'x' }, neverAborted()), {
    ok: false,
    code: 'server_unavailable',
  });
  t.match(await mcp.call('mcp_files_nope', {}, neverAborted()), { ok: false, code: 'unknown_tool' });
  t.match(await mcp.call('mcp_files_Shout', {}, neverAborted()), { ok: false, code: 'unknown_tool' });
  t.match(await mcp.call('mcp_other_echo', {}, neverAborted()), { ok: false, code: 'unknown_tool' });
  t.match(await mcp.call('read_file', {}, neverAborted()), { ok: false, code: 'unknown_tool' });
  const cancelled = new AbortController();
  cancelled.abort();
  t.match(await mcp.call('mcp_files_echo', { text: 'x' }, cancelled.signal), {
    ok: false,
    code: 'cancelled',
  });
});

t.test('close() stops every child and nothing is spawned afterwards', async (t) => {
  const { mcp, notes } = harness(t, (notes) => ({
    one: fixtureServer('normal', notes('one')),
    two: fixtureServer('normal', notes('two')),
  }));
  await untilState(mcp, 'one', 'ready');
  await untilState(mcp, 'two', 'ready');
  const pids = [...startedPids(notes('one')), ...startedPids(notes('two'))];
  t.equal(pids.length, 2);
  t.ok(pids.every(alive), 'both run');
  await mcp.close();
  t.same(pids.filter(alive), [], 'no child is left');
  t.same(mcp.status(), [
    { name: 'one', state: 'stopped', tools: 0 },
    { name: 'two', state: 'stopped', tools: 0 },
  ]);
  t.same(mcp.tools(), []);
  mcp.start();
  t.equal(stateOf(mcp, 'one'), 'stopped', 'start after close does nothing');
  t.match(await mcp.call('mcp_one_echo', { text: 'x' }, neverAborted()), {
    ok: false,
    code: 'server_unavailable',
  });
});

t.test('a server without tools is ready with none', async (t) => {
  const { mcp, warnings } = harness(t, (notes) => ({ bare: fixtureServer('bare', notes('bare')) }));
  await untilState(mcp, 'bare', 'ready');
  t.same(mcp.status(), [{ name: 'bare', state: 'ready', tools: 0 }]);
  t.same(warnings, []);
});

/** Arguments `{text, nested}` nesting `levels` deep, the arguments object itself the first level. */
function nestedArguments(levels: number): Record<string, unknown> {
  let nested: unknown = 'leaf';
  for (let i = 1; i < levels; i++) nested = [nested];
  return { text: 'deep', nested };
}

t.test(
  'arguments nesting deeper than the bound are refused in the daemon; the server keeps serving',
  async (t) => {
    const { mcp, notes } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
    await untilState(mcp, 'files', 'ready');
    t.notOk(exceedsDepth(nestedArguments(MCP_LIMITS.arguments_depth), MCP_LIMITS.arguments_depth));
    t.ok(exceedsDepth(nestedArguments(MCP_LIMITS.arguments_depth + 1), MCP_LIMITS.arguments_depth));
    t.same(
      await mcp.call('mcp_files_echo', nestedArguments(MCP_LIMITS.arguments_depth), neverAborted()),
      { ok: true, output: '{"content":"deep","is_error":false,"truncated":false}' },
      'at the bound the call runs',
    );
    t.same(noted(notes('files')).filter((line) => line === 'echo called').length, 1);
    for (const levels of [MCP_LIMITS.arguments_depth + 1, 7_000]) {
      t.same(
        await mcp.call('mcp_files_echo', nestedArguments(levels), neverAborted()),
        { ok: false, code: 'invalid_arguments', message: MCP_CALL_MESSAGES.invalid_arguments },
        `${levels} levels are refused, not reported as the server's failure`,
      );
    }
    t.equal(stateOf(mcp, 'files'), 'ready', 'the server was never touched');
    t.same(noted(notes('files')).filter((line) => line === 'echo called').length, 1, 'nothing reached it');
    t.match(await mcp.call('mcp_files_echo', { text: 'after' }, neverAborted()), {
      ok: true,
      output: /"after"/,
    });
  },
);
