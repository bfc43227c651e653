import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/mcp-fixture-server.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Daemons and MCP servers start from the TypeScript sources.
t.setTimeout(180_000);

type Status = { mcp_servers: Array<{ name: string; state: string; tools: number }> };

async function scene(t: Test, servers: Record<string, unknown>) {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(workspace);
  writeFileSync(join(home, 'config.json'), JSON.stringify({ mcp_servers: servers }));
  const provider = await ScriptedProvider.start(t);
  const args = ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'];
  return { home, workspace, socket: join(root, 'd.sock'), provider, args };
}

async function connected(t: Test, socket: string): Promise<WireClient> {
  const { client } = await connectSocket(socket);
  t.teardown(() => client.close());
  await client.initialize([]);
  return client;
}

async function until(client: WireClient, what: string, check: (status: Status) => boolean): Promise<Status> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = (await client.call('status')) as Status;
    if (check(status)) return status;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const stateOf = (status: Status, name: string) =>
  status.mcp_servers.find((server) => server.name === name)?.state;

async function readyTime(
  t: Test,
  servers: Record<string, unknown>,
): Promise<{ ms: number; client: WireClient }> {
  const { home, socket, args } = await scene(t, servers);
  const started = performance.now();
  await startDaemon(t, { socket, home, args });
  const ms = performance.now() - started;
  return { ms, client: await connected(t, socket) };
}

t.test('three MCP servers, one broken, do not delay the ready line or any client', async (t) => {
  const without = await readyTime(t, {});
  const withServers = await readyTime(t, {
    one: fixtureServerConfig('normal'),
    two: fixtureServerConfig('normal'),
    broken: fixtureServerConfig('silent', { timeout_ms: 600_000 }),
  });
  t.comment(
    `ready line without MCP servers: ${without.ms.toFixed(0)} ms; with three, one broken: ${withServers.ms.toFixed(0)} ms`,
  );
  const first = (await withServers.client.call('status')) as Status;
  t.equal(stateOf(first, 'broken'), 'starting', 'the daemon answered while a server was still starting');
  const later = await until(withServers.client, 'the two good servers', (status) =>
    ['one', 'two'].every((name) => stateOf(status, name) === 'ready'),
  );
  t.equal(
    stateOf(later, 'broken'),
    'starting',
    'the broken one never answered initialize, and nothing waited for it',
  );
});

t.test(
  'over a real daemon: the tools in the request bytes, a call and its result, a crash mid-call and the way back',
  async (t) => {
    const { home, workspace, socket, provider, args } = await scene(t, {
      fix: fixtureServerConfig('normal'),
    });
    await startDaemon(t, { socket, home, args });
    const client = await connected(t, socket);
    await until(client, 'the server', (status) => stateOf(status, 'fix') === 'ready');
    const { session, control } = await claimedSession(client, workspace);

    provider.replyToolCalls([{ id: 'm1', name: 'mcp_fix_echo', arguments: '{"text":"over the wire"}' }]);
    provider.replyToolCalls([{ id: 'm2', name: 'mcp_fix_crash', arguments: '{}' }]);
    provider.reply(['Both done.']);
    await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    t.match((await client.event('turn.terminal', 30_000)).payload, {
      status: 'completed',
      assistant_text: 'Both done.',
    });
    const [first, second, third] = provider.requests;
    t.match(first!.text, '"name":"mcp_fix_echo"', 'offered with the mcp_ prefix in the request bytes');
    const toolText = (request: typeof second) =>
      request!.body.messages.filter((message: { role: string }) => message.role === 'tool').at(-1)
        .content as string;
    t.same(JSON.parse(toolText(second)), { content: 'over the wire', is_error: false, truncated: false });
    t.match(
      JSON.parse(toolText(third)),
      { error: { code: 'server_failed' } },
      'the crashed call failed; the turn went on',
    );

    const back = await until(client, 'the restart', (status) => stateOf(status, 'fix') === 'ready');
    t.match(back.mcp_servers, [{ name: 'fix', state: 'ready', tools: 10 }], 'the server came back');
  },
);
