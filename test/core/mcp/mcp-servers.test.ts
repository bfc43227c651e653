import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import t from 'tap';
import { MCP_CALL_MESSAGES, MCP_LIMITS, type McpServers } from '../../../core/mcp/mcp-servers.js';
import { exceedsDepth } from '../../../core/mcp/tool-admission.js';
import { hashedName, MODEL_TOOL_NAME } from '../../../core/mcp/tool-names.js';
import {
  ECHO_DESCRIPTION,
  LONG_TOOL_NAME,
  STDERR_SECRET,
  UNREACHABLE_MESSAGE,
} from '../../fixtures/mcp-server-constants.js';
import {
  alive,
  fixtureServer,
  harness,
  neverAborted,
  noted,
  startedPids,
  stateOf,
  tempDir,
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
        hashedName('files', LONG_TOOL_NAME),
        'mcp_files_Shout',
      ],
      'in the server order, the unfit tools left out',
    );
    t.ok(
      tools.every((tool) => MODEL_TOOL_NAME.test(tool.name)),
      'every name is one providers accept',
    );
    t.equal(tools[8]!.tool, LONG_TOOL_NAME, 'the raw name is kept for the calls');
    const echo = tools[0]!;
    t.equal(echo.server, 'files');
    t.equal(echo.tool, 'echo');
    t.equal(echo.description, ECHO_DESCRIPTION);
    t.match(echo.inputSchema, {
      type: 'object',
      properties: { text: { type: 'string', description: 'What to echo' } },
      required: ['text'],
    });
    t.same(mcp.status(), [{ name: 'files', state: 'ready', tools: 10 }]);
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

t.test(
  "a JSON-RPC error's message is the call's error text: bounded, on one line, its configured values replaced",
  async (t) => {
    const secret = 'ntn_fixture_secret_9d31';
    const { mcp, warnings } = harness(t, (notes) => ({
      notion: fixtureServer('unreachable', notes('notion'), {
        env: { FIXTURE_NOTES: notes('notion'), FIXTURE_SECRET: secret },
      }),
      wordy: fixtureServer('unreachable', notes('wordy'), {
        env: { FIXTURE_NOTES: notes('wordy'), FIXTURE_PADDING: '5000' },
      }),
    }));
    await untilState(mcp, 'notion', 'ready');
    await untilState(mcp, 'wordy', 'ready');
    t.same(await mcp.call('mcp_notion_echo', { text: 'hello' }, neverAborted()), {
      ok: false,
      code: 'tool_failed',
      message: `${MCP_CALL_MESSAGES.tool_failed} (-32603): ${UNREACHABLE_MESSAGE} (token [redacted]) at fetch (node:internal/deps/undici)`,
    });
    t.equal(stateOf(mcp, 'notion'), 'ready', 'a refusal is no loss');
    const long = await mcp.call('mcp_wordy_echo', { text: 'hello' }, neverAborted());
    const said = long.ok ? '' : long.message.slice(`${MCP_CALL_MESSAGES.tool_failed} (-32603): `.length);
    t.equal(Buffer.byteLength(said), MCP_LIMITS.error_message_bytes - 1, 'cut between characters');
    t.match(said, /^getaddrinfo ENOTFOUND .*é…$/);
    t.notMatch(JSON.stringify(warnings), secret);
  },
);

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

t.test('tools over the schema bounds are skipped with warnings naming the server and the tool', async (t) => {
  const { mcp, warnings } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  t.same(
    warnings.map((warning) => warning.fields),
    [
      { server: 'files', tool: 'wide', reason: 'schema_too_large' },
      { server: 'files', tool: 'deep', reason: 'schema_too_deep' },
    ],
  );
  t.ok(warnings.every((warning) => warning.message === 'MCP server tool skipped'));
  const logged = JSON.stringify(warnings);
  for (const word of ['Has a', 'field_', 'inner']) t.notOk(logged.includes(word), `no ${word} of the schema`);
});

t.test('a tool is called under the raw name its server gave it, whatever name the model sees', async (t) => {
  const { mcp } = harness(t, (notes) => ({ files: fixtureServer('normal', notes('files')) }));
  await untilState(mcp, 'files', 'ready');
  t.same(await mcp.call('mcp_files_Shout', {}, neverAborted()), {
    ok: true,
    output: '{"content":"shout","is_error":false,"truncated":false}',
  });
  t.same(await mcp.call(hashedName('files', LONG_TOOL_NAME), {}, neverAborted()), {
    ok: true,
    output: '{"content":"long","is_error":false,"truncated":false}',
  });
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

async function whoami(mcp: McpServers, name: string): Promise<Record<string, unknown>> {
  const outcome = await mcp.call(`mcp_${name}_whoami`, {}, neverAborted());
  if (!outcome.ok) throw new Error(`the call failed: ${outcome.code}`);
  return JSON.parse((JSON.parse(outcome.output) as { content: string }).content) as Record<string, unknown>;
}

t.test('the child gets its configured environment, not the daemon environment', async (t) => {
  process.env.MAGI_API_KEY = 'sk-test-never-shown';
  t.teardown(() => {
    delete process.env.MAGI_API_KEY;
  });
  const { mcp } = harness(t, (notes) => ({
    files: fixtureServer('normal', notes('files'), {
      env: { FIXTURE_NOTES: notes('files'), FIXTURE_GREETING: 'hi' },
    }),
  }));
  await untilState(mcp, 'files', 'ready');
  const seen = await whoami(mcp, 'files');
  t.equal(seen.sees_api_key, false, 'the API key stays with the daemon');
  t.equal(seen.greeting, 'hi', 'the configured env is passed');
});

t.test(
  'a child starts in its cwd, else in a private empty directory that goes with the daemon',
  async (t) => {
    const placed = tempDir(t);
    const { mcp, home, scratchRoot } = harness(t, (notes) => ({
      loose: fixtureServer('normal', notes('loose')),
      placed: fixtureServer('normal', notes('placed'), { cwd: placed }),
      other: fixtureServer('normal', notes('other')),
    }));
    for (const name of ['loose', 'placed', 'other']) await untilState(mcp, name, 'ready');
    t.equal((await whoami(mcp, 'placed')).cwd, placed, 'the configured cwd');
    const loose = String((await whoami(mcp, 'loose')).cwd);
    const other = String((await whoami(mcp, 'other')).cwd);
    t.not(loose, home, 'never the home');
    t.not(loose, other, 'one directory each');
    const scratch = dirname(loose);
    t.equal(dirname(scratch), scratchRoot);
    t.match(basename(scratch), /^magid-mcp-/);
    t.equal(dirname(other), scratch);
    t.equal(statSync(scratch).mode & 0o777, 0o700, 'private to the daemon');
    t.same(readdirSync(loose), [], 'empty');
    await mcp.close();
    t.notOk(existsSync(scratch), 'removed when the servers are closed');
    t.ok(existsSync(placed), 'a configured cwd is left alone');
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
  t.match(await mcp.call('mcp_files_shout', {}, neverAborted()), { ok: false, code: 'unknown_tool' });
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

t.test('without a private directory, the servers that need one fail; one with a cwd runs', async (t) => {
  const placed = tempDir(t);
  const { mcp, warnings } = harness(
    t,
    (notes) => ({
      loose: fixtureServer('normal', notes('loose')),
      placed: fixtureServer('normal', notes('placed'), { cwd: placed }),
    }),
    join(tempDir(t), 'missing'),
  );
  await untilState(mcp, 'placed', 'ready');
  t.same(mcp.status()[0], {
    name: 'loose',
    state: 'failed',
    tools: 0,
    reason: 'its private working directory could not be made',
  });
  t.match(warnings, [
    { fields: { reason: 'ENOENT' }, message: 'the MCP servers’ working directories could not be made' },
    {
      fields: { server: 'loose', reason: 'no_work_directory' },
      message: 'MCP server failed and is not restarted',
    },
  ]);
});
