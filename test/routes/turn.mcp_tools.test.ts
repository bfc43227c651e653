import t, { type Test } from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { hashedName } from '../../core/mcp/tool-names.js';
import { hashedId } from '../../core/turns/call-dispatcher.js';
import { LONG_TOOL_NAME, UNREACHABLE_MESSAGE } from '../fixtures/mcp-server-constants.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/mcp-fixture-server.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { type Controller, controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

// Each test starts real MCP server children from the TypeScript sources.
t.setTimeout(120_000);

interface ChatMessage {
  role: string;
  content: string;
  tool_call_id?: string;
}

interface Scene {
  daemon: TestDaemon;
  provider: ScriptedProvider;
  who: Controller;
  status(): Promise<{ mcp_servers: Array<{ name: string; state: string; tools: number }> }>;
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A daemon with MCP servers `fix` (the fixture's normal tools) and, when asked, `mute` (never answers);
 * `fix` runs in `mode` with `env`.
 */
async function scene(
  t: Test,
  withMute = false,
  mode = 'normal',
  env: Record<string, string> = {},
): Promise<Scene> {
  const provider = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    config: {
      mcp_servers: {
        fix: fixtureServerConfig(mode, { env }),
        ...(withMute ? { mute: fixtureServerConfig('silent') } : {}),
      },
    },
  });
  const who = await controller(daemon, 'in-process');
  const status = async () => (await who.client.call('status')) as Awaited<ReturnType<Scene['status']>>;
  await waitFor(
    async () =>
      (await status()).mcp_servers.some((server) => server.name === 'fix' && server.state === 'ready'),
    'the fix server',
  );
  return { daemon, provider, who, status };
}

const toolNames = (body: { tools?: Array<{ function: { name: string } }> }) =>
  (body.tools ?? []).map((tool) => tool.function.name);

function toolMessages(body: { messages: ChatMessage[] }): ChatMessage[] {
  return body.messages.filter((message) => message.role === 'tool');
}

async function records(client: WireClient, session: string) {
  const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
  // biome-ignore lint/suspicious/noExplicitAny: records are read member by member
  return replay.records as Array<{ kind: string; data: Record<string, any> }>;
}

t.test(
  'an MCP server’s tools are offered with the mcp_ prefix and a call’s result reaches the model',
  async (t) => {
    const { provider, who } = await scene(t);
    provider.replyToolCalls([{ id: 'm1', name: 'mcp_fix_echo', arguments: '{"text":"mcp-argument-6a0e"}' }]);
    provider.reply(['Echoed.']);
    resultOf(await startTurn(who, { prompt: 'Echo it.' }));
    t.match((await who.client.event('turn.terminal')).payload, {
      status: 'completed',
      assistant_text: 'Echoed.',
    });
    const [first, second] = provider.requests;
    const mcp = toolNames(first!.body).filter((name) => name.startsWith('mcp_'));
    t.same(mcp, [
      'mcp_fix_echo',
      'mcp_fix_slow',
      'mcp_fix_freeze',
      'mcp_fix_crash',
      'mcp_fix_whoami',
      'mcp_fix_parts',
      'mcp_fix_big',
      'mcp_fix_flood',
      hashedName('fix', LONG_TOOL_NAME),
      'mcp_fix_Shout',
    ]);
    t.match(
      first!.text,
      /"name":"mcp_fix_echo","description":"Echoes its text back\."/,
      'in the request bytes',
    );
    t.same(JSON.parse(toolMessages(second!.body)[0]!.content), {
      content: 'mcp-argument-6a0e',
      is_error: false,
      truncated: false,
    });
    const history = await records(who.client, who.session);
    const binding = history.find((record) => record.kind === 'turn.call')?.data;
    t.match(binding, { name: 'mcp_fix_echo', mcp: true, provider_call_id: 'm1' });
    t.match(history.find((record) => record.kind === 'turn.call_result')?.data, {
      outcome: { status: 'success' },
    });
    t.match(history.find((record) => record.kind === 'turn.terminal')?.data.calls, [
      { call_id: binding?.call_id, tool: 'mcp_fix_echo', status: 'succeeded', external_effects: 'reported' },
    ]);
    const activity = who.client.received.filter((frame) => frame.includes('"turn.activity"')).join('\n');
    t.match(activity, hashedId(String(binding?.call_id)));
    t.notMatch(
      JSON.stringify([activity, history]),
      'mcp-argument-6a0e',
      'no arguments or output in activity or history',
    );
  },
);

t.test(
  'a server killed mid-call fails that call, the turn goes on, later turns see the server again',
  async (t) => {
    const { daemon, provider, who, status } = await scene(t);
    provider.replyToolCalls([{ id: 'c1', name: 'mcp_fix_crash', arguments: '{}' }]);
    provider.reply(['It failed.']);
    resultOf(await startTurn(who, { prompt: 'Crash it.' }));
    t.match((await who.client.event('turn.terminal')).payload, {
      status: 'completed',
      assistant_text: 'It failed.',
    });
    const continuation = provider.requests[1]!;
    t.match(JSON.parse(toolMessages(continuation.body)[0]!.content), { error: { code: 'server_failed' } });
    t.ok(
      toolNames(continuation.body).includes('mcp_fix_echo'),
      'the turn keeps the tools it was admitted with while the server is down',
    );
    t.match((await status()).mcp_servers, [{ name: 'fix', state: 'restarting', tools: 0 }]);

    provider.reply(['Meanwhile.']);
    resultOf(await startTurn(who, { prompt: 'And now?' }));
    await who.client.event('turn.terminal');
    t.notOk(
      toolNames(provider.requests[2]!.body).some((name) => name.startsWith('mcp_')),
      'a turn admitted meanwhile has none',
    );

    daemon.clock.advance(1_000);
    await waitFor(async () => (await status()).mcp_servers[0]?.state === 'ready', 'the restart');
    provider.reply(['Back.']);
    resultOf(await startTurn(who, { prompt: 'Back?' }));
    await who.client.event('turn.terminal');
    t.ok(toolNames(provider.requests[3]!.body).includes('mcp_fix_echo'), 'the server came back');
  },
);

t.test(
  "a server's JSON-RPC error reaches the model as the call's error text, its configured secret replaced",
  async (t) => {
    const secret = 'ntn_turn_secret_51c0a';
    const { provider, who } = await scene(t, false, 'unreachable', { FIXTURE_SECRET: secret });
    provider.replyToolCalls([{ id: 'n1', name: 'mcp_fix_echo', arguments: '{"text":"find it"}' }]);
    provider.reply(['Notion is unreachable.']);
    resultOf(await startTurn(who, { prompt: 'Search my notes.' }));
    t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
    t.same(JSON.parse(toolMessages(provider.requests[1]!.body)[0]!.content), {
      error: {
        code: 'tool_failed',
        message: `the MCP server refused the call (-32603): ${UNREACHABLE_MESSAGE} (token [redacted]) at fetch (node:internal/deps/undici)`,
      },
    });
    t.notMatch(provider.requests[1]!.text, secret, 'never the secret');
    const history = await records(who.client, who.session);
    t.match(history.find((record) => record.kind === 'turn.call_result')?.data, {
      outcome: { status: 'error', code: 'tool_failed', message: /ENOTFOUND api\.notion\.com/ },
    });
    t.notMatch(JSON.stringify(history), secret);
  },
);

t.test('a server that never answers initialize does not stop the daemon or the other server', async (t) => {
  const { provider, who, status } = await scene(t, true);
  t.same((await status()).mcp_servers, [
    { name: 'fix', state: 'ready', tools: 10 },
    { name: 'mute', state: 'starting', tools: 0 },
  ]);
  provider.reply(['ok']);
  resultOf(await startTurn(who, { prompt: 'go' }));
  await who.client.event('turn.terminal');
  const names = toolNames(provider.requests[0]!.body);
  t.ok(names.includes('mcp_fix_echo'));
  t.notOk(names.some((name) => name.startsWith('mcp_mute_')));
});

t.test('a subagent gets the turn’s MCP tools', async (t) => {
  const { provider, who } = await scene(t);
  provider.replyToolCalls([{ id: 's1', name: 'spawn_agent', arguments: '{"task":"Echo hi."}' }]);
  provider.replyToolCalls([{ id: 'e1', name: 'mcp_fix_echo', arguments: '{"text":"hi"}' }]);
  provider.reply(['Echoed hi.']);
  provider.reply(['Done.']);
  resultOf(await startTurn(who, { prompt: 'go' }));
  t.match((await who.client.event('turn.terminal')).payload, { status: 'completed' });
  const child = provider.requests[1]!;
  t.ok(toolNames(child.body).includes('mcp_fix_echo'));
  t.notOk(toolNames(child.body).includes('spawn_agent'));
  t.same(JSON.parse(toolMessages(provider.requests[2]!.body)[0]!.content), {
    content: 'hi',
    is_error: false,
    truncated: false,
  });
});
