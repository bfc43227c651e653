import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import {
  processesLeft,
  processesWith,
  processStarted,
  sandboxUnavailable,
} from '../helpers/sandbox-machine.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { runMagid, shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Daemons start from the TypeScript sources, and commands run in real sandboxes.
t.setTimeout(180_000);

const ENABLED = { tools: { enabled: ['run_command'] } };

/** A home whose config enables run_command, a workspace, a socket path and a scripted provider. */
async function scene(t: Test) {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(workspace);
  writeFileSync(join(home, 'config.json'), JSON.stringify(ENABLED));
  const provider = await ScriptedProvider.start(t);
  const args = ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'];
  return { root, home, workspace, socket: join(root, 'd.sock'), provider, args };
}

async function connected(t: Test, socket: string): Promise<WireClient> {
  const { client } = await connectSocket(socket);
  t.teardown(() => client.close());
  await client.initialize([]);
  return client;
}

function commandCall(command: string, timeoutMs?: number) {
  return [
    {
      id: 'c1',
      name: 'run_command',
      arguments: JSON.stringify({ command, ...(timeoutMs ? { timeout_ms: timeoutMs } : {}) }),
    },
  ];
}

async function terminalRecord(client: WireClient, session: string) {
  const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
  const records = replay.records as Array<{ kind: string; data: Record<string, unknown> }>;
  return records.find((record) => record.kind === 'turn.terminal')?.data;
}

const skip = { skip: sandboxUnavailable ?? false };

t.test(
  'a command writes only its workspace, reaches no network and sees nothing of the daemon',
  skip,
  async (t) => {
    const { home, workspace, socket, provider, args } = await scene(t);
    const listener = createServer((connection) => {
      reached = true;
      connection.destroy();
    });
    let reached = false;
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    t.teardown(() => listener.close());
    const port = (listener.address() as { port: number }).port;
    // On the read-only root: /tmp and /var/tmp are the command's own empty folders.
    const outside = join('/usr/local', `magid-outside-${process.pid}`);
    const command = [
      'echo inside > made.txt',
      `(echo outside > ${outside}) 2>/dev/null || echo no-outside`,
      `cat ${join(home, 'config.json')} 2>/dev/null || echo no-home`,
      `node -e "require('net').connect(${port},'127.0.0.1').on('connect',()=>console.log('connected')).on('error',()=>console.log('no-network'))"`,
    ].join('; ');
    provider.replyToolCalls(commandCall(command));
    provider.reply(['done']);
    await startDaemon(t, { socket, home, args });
    const client = await connected(t, socket);
    const status = await client.call('status');
    t.match(status, { tools: { run_command: 'offered' } });
    const { session, control } = await claimedSession(client, workspace);
    await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    t.match((await client.event('turn.terminal', 20_000)).payload, { status: 'completed' });
    const tool = provider.requests[1]!.body.messages.find(
      (message: { role: string }) => message.role === 'tool',
    );
    const result = JSON.parse(tool.content) as { exit_code: number; output: string };
    t.equal(result.exit_code, 0);
    t.match(result.output, /no-outside\nno-home\nno-network\n/, 'every escape failed');
    t.notMatch(result.output, 'run_command', 'the daemon’s config was not readable');
    t.equal(readFileSync(join(workspace, 'made.txt'), 'utf8'), 'inside\n', 'the workspace is writable');
    t.notOk(existsSync(outside), 'nothing was written outside it');
    t.notOk(reached, 'the loopback listener saw no connection');
  },
);

t.test('turn.stop kills a sleeping command and leaves no process behind', skip, async (t) => {
  const { home, workspace, socket, provider, args } = await scene(t);
  const marker = `sleep ${90_000 + (process.pid % 1000)}`;
  provider.replyToolCalls(commandCall(marker, 600_000));
  await startDaemon(t, { socket, home, args });
  const client = await connected(t, socket);
  const { session, control } = await claimedSession(client, workspace);
  const accepted = await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
  await processStarted(marker);
  await client.call('turn.stop', { turn_id: accepted.turn_id }, { session, control, operation: op() });
  t.match((await client.event('turn.terminal', 20_000)).payload, { status: 'cancelled' });
  t.same(await processesLeft(marker, 10_000), [], 'the command and its sandbox are gone');
  t.match((await terminalRecord(client, session))?.calls, [
    { tool: 'run_command', status: 'cancelled', external_effects: 'uncertain' },
  ]);
});

t.test(
  'a command still running at its time limit is killed whole, and the model is told',
  skip,
  async (t) => {
    const { home, workspace, socket, provider, args } = await scene(t);
    const marker = `sleep ${92_000 + (process.pid % 1000)}`;
    provider.replyToolCalls(commandCall(`${marker} & ${marker}`, 1_000));
    provider.reply(['It timed out.']);
    await startDaemon(t, { socket, home, args });
    const client = await connected(t, socket);
    const { session, control } = await claimedSession(client, workspace);
    await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    t.match((await client.event('turn.terminal', 20_000)).payload, { status: 'completed' });
    const tool = provider.requests[1]!.body.messages.find(
      (message: { role: string }) => message.role === 'tool',
    );
    t.match(JSON.parse(tool.content), { timed_out: true, exit_code: null });
    t.same(await processesLeft(marker, 10_000), [], 'both sleeps are gone');
  },
);

t.test(
  'kill -9 during a command: after a restart the call is uncertain and never runs again',
  skip,
  async (t) => {
    const { home, workspace, socket, provider, args } = await scene(t);
    const marker = `sleep ${91_000 + (process.pid % 1000)}`;
    provider.replyToolCalls(commandCall(`echo ran >> runs.log; ${marker}`, 600_000));
    const first = await startDaemon(t, { socket, home, args });
    const client = await connected(t, socket);
    const { session, control } = await claimedSession(client, workspace);
    await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    await processStarted(marker);
    first.magid.child.kill('SIGKILL');
    await first.magid.waitExit();
    t.same(await processesLeft(marker, 10_000), [], 'the sandbox died with the daemon');

    const requestsBefore = provider.requests.length;
    const second = await startDaemon(t, { socket, home, args });
    t.match(second.magid.stderr, /turns interrupted by the last stop were recorded as failed/);
    const again = await connected(t, socket);
    const terminal = await terminalRecord(again, session);
    t.match(terminal, { status: 'failed', error: { code: 'interrupted' } });
    t.match(terminal?.calls, [{ tool: 'run_command', status: 'failed', external_effects: 'uncertain' }]);
    await sleep(500);
    t.equal(readFileSync(join(workspace, 'runs.log'), 'utf8'), 'ran\n', 'the command ran once, not again');
    t.equal(provider.requests.length, requestsBefore, 'nothing asked the model again');
    t.same(await processesWith(marker), []);
  },
);

t.test('with bwrap hidden from PATH, run_command is unavailable and never offered', skip, async (t) => {
  const { home, workspace, socket, provider, args } = await scene(t);
  const magid = runMagid(t, ['serve', '--socket', socket, '--home', home, ...args], { PATH: '/nonexistent' });
  await magid.firstLine();
  t.match(magid.stderr, /run_command is enabled but the bubblewrap sandbox cannot run here/);
  const client = await connected(t, socket);
  const status = await client.call('status');
  t.match(status, { tools: { run_command: 'unavailable' } });
  t.notOk((status.tools as { builtin: string[] }).builtin.includes('run_command'));
  provider.reply(['ok']);
  const { session, control } = await claimedSession(client, workspace);
  await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
  await client.event('turn.terminal', 20_000);
  t.notMatch(provider.requests[0]!.text, 'run_command', 'not in the request bytes');
});
