import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { MCP_LIMITS } from '../../core/mcp/mcp-limits.js';
import { plainName } from '../../core/mcp/tool-names.js';
import { cutUtf8 } from '../../core/resources/unicode.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { fixtureServerConfig } from '../helpers/mcp-fixture-server.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Daemons and MCP servers start from the TypeScript sources.
t.setTimeout(180_000);

type Status = { mcp_servers: Array<{ name: string; state: string; tools: number; reason?: string }> };

/** A home whose config.json gives `servers` (or what they are for the workspace) under `section`. */
async function scene(
  t: Test,
  servers: Record<string, unknown> | ((workspace: string) => Record<string, unknown>),
  section = 'mcp_servers',
) {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(workspace);
  const entries = typeof servers === 'function' ? servers(workspace) : servers;
  writeFileSync(join(home, 'config.json'), JSON.stringify({ [section]: entries }));
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

/** The entry point of a reference server installed for the tests, run with this Node: no network needed. */
function referenceServer(pkg: string): string {
  const root = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  return join(root, 'dist/index.js');
}

/** What a server lists itself, asked directly over the SDK's stdio client. */
async function ownList(
  args: string[],
): Promise<Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }>> {
  const client = new Client({ name: 'lister', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore', cwd: dirname(args[0]!) }),
  );
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

t.test(
  'the reference servers everything and filesystem, from an mcpServers file beside a broken entry: every tool offered, hyphenated ones called by their raw names',
  async (t) => {
    const everything = [referenceServer('@modelcontextprotocol/server-everything')];
    const filesystemServer = referenceServer('@modelcontextprotocol/server-filesystem');
    const { home, workspace, socket, provider, args } = await scene(
      t,
      (workspace) => ({
        everything: { command: process.execPath, args: everything },
        filesystem: { command: process.execPath, args: [filesystemServer, workspace] },
        // Given ".", as some READMEs suggest: it gets the daemon's private empty directory, not the home.
        dot: { command: process.execPath, args: [filesystemServer, '.'] },
        broken: { type: 'stdio', args: [] },
      }),
      'mcpServers',
    );
    writeFileSync(join(workspace, 'notes.txt'), 'read through the filesystem server\n');
    const [everythingTools, filesystemTools] = await Promise.all([
      ownList(everything),
      ownList([filesystemServer, workspace]),
    ]);
    const { magid } = await startDaemon(t, { socket, home, args });
    const client = await connected(t, socket);
    const status = await until(client, 'the reference servers', (status) =>
      ['everything', 'filesystem', 'dot'].every((name) => stateOf(status, name) === 'ready'),
    );
    t.match(status.mcp_servers, [
      { name: 'everything', state: 'ready', tools: everythingTools.length },
      { name: 'filesystem', state: 'ready', tools: filesystemTools.length },
      { name: 'dot', state: 'ready' },
      { name: 'broken', state: 'failed', tools: 0, reason: 'command must be a non-empty string' },
    ]);
    t.match(magid.stderr, /"server":"broken".*MCP server configuration refused/, 'one warning names it');
    t.ok(
      everythingTools.some((tool) => tool.name.includes('-')),
      'everything lists hyphenated names',
    );

    const { session, control } = await claimedSession(client, workspace);
    provider.replyToolCalls([
      { id: 'e1', name: 'mcp_everything_get-sum', arguments: '{"a":2,"b":3}' },
      {
        id: 'f1',
        name: 'mcp_filesystem_read_text_file',
        arguments: JSON.stringify({ path: join(workspace, 'notes.txt') }),
      },
      { id: 'd1', name: 'mcp_dot_list_directory', arguments: '{"path":"."}' },
    ]);
    provider.reply(['Summed and read.']);
    await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    t.match((await client.event('turn.terminal', 60_000)).payload, { status: 'completed' });

    const [first, second] = provider.requests;
    const offered = (first!.body.tools as Array<{ function: { name: string } }>).map((tool) => tool.function);
    for (const [server, tools] of [
      ['everything', everythingTools],
      ['filesystem', filesystemTools],
    ] as const) {
      t.same(
        offered.filter((tool) => tool.name.startsWith(`mcp_${server}_`)),
        tools.map((tool) => ({
          name: plainName(server, tool.name),
          description: cutUtf8(tool.description ?? '', MCP_LIMITS.description_bytes),
          parameters: tool.inputSchema,
        })),
        `every tool ${server} lists, in its order`,
      );
    }
    const results = new Map(
      (second!.body.messages as Array<{ role: string; tool_call_id?: string; content: string }>)
        .filter((message) => message.role === 'tool')
        .map((message) => [message.tool_call_id, JSON.parse(message.content) as { content: string }]),
    );
    t.same(
      results.get('e1'),
      { content: 'The sum of 2 and 3 is 5.', is_error: false, truncated: false },
      'get-sum reached everything under its raw name and summed',
    );
    t.same(results.get('f1'), {
      content: 'read through the filesystem server\n',
      is_error: false,
      truncated: false,
    });
    t.same(
      results.get('d1'),
      { content: '', is_error: false, truncated: false },
      'a server given "." lists an empty directory of its own, never the home',
    );
  },
);
