import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { ResponseFrame, WireClient } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { logged, logLines, shortTempDir, startStdio } from './spawn-daemon.js';

// Eight daemons start from the TypeScript sources, each in a few seconds.
t.setTimeout(240_000);

/** Bound of every wait on a daemon or the provider; generous, since the machine may be busy. */
const WAIT_MS = 20_000;
const PROMPT = 'Summarize my notes';

interface ReplayRecord {
  kind: string;
  data: Record<string, unknown> | null;
}

/** `promise`, or a rejection naming `what` once WAIT_MS passed. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), WAIT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A home and a workspace under a fresh directory. */
function directories(t: Test): { home: string; workspace: string } {
  const root = shortTempDir(t);
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  return { home: join(root, 'home'), workspace };
}

function providerArgs(provider: ScriptedProvider): string[] {
  return ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'];
}

/** Starts a turn whose provider response is held, and waits until the provider holds it. */
async function runningTurn(t: Test, client: WireClient, provider: ScriptedProvider, workspace: string) {
  const { session, control } = await claimedSession(client, workspace);
  const hold = provider.hold();
  provider.script(stream([hold]));
  const accepted = await client.call('turn.start', { prompt: PROMPT }, { session, control, operation: op() });
  const request = await within(provider.nextRequest(), 'the provider request');
  await within(hold.reached, 'the held response');
  t.teardown(() => hold.release());
  return { session, turnId: accepted.turn_id as string, request };
}

/** The session's history, read by a new stdio daemon on the same home, which then exits 0 at EOF. */
async function historyAfterRestart(t: Test, home: string, session: string): Promise<ReplayRecord[]> {
  const again = await startStdio(t, { home });
  await again.client.initialize([]);
  const replay = await again.client.call('session.replay', { cursor: null, limit: 100 }, { session });
  again.client.close();
  t.strictSame(await again.magid.waitExit(WAIT_MS), { code: 0, signal: null }, 'the second daemon exits 0');
  return replay.records as ReplayRecord[];
}

t.test('the end of stdin cancels the running turn, records its terminal and exits 0', async (t) => {
  const { home, workspace } = directories(t);
  const provider = await ScriptedProvider.start(t);
  const { magid, client } = await startStdio(t, { home, args: providerArgs(provider) });

  const refused = await client.request('initialize', {
    wire: 2,
    client: { name: 'c', version: '1' },
    requested_capabilities: ['application_resources_v1'],
  });
  t.equal(refused.error?.code, 'unsupported_capability', 'the profile is never negotiated on stdio');
  t.same((await client.initialize([])).negotiated_capabilities, []);
  const { session, turnId, request } = await runningTurn(t, client, provider, workspace);

  client.close();
  const terminal = await client.event('turn.terminal', WAIT_MS);
  t.strictSame(
    terminal.payload,
    { turn_id: turnId, status: 'cancelled', error: null, assistant_text: '', activity_dropped: 0 },
    'the turn is cancelled and its terminal still reaches stdout',
  );
  t.strictSame(await magid.waitExit(WAIT_MS), { code: 0, signal: null }, 'exits 0');
  await within(request.disconnected, 'the provider to see its request end');

  const frames = magid.stdout.trimEnd().split('\n');
  t.ok(
    frames.every((line) => ['response', 'event'].includes((JSON.parse(line) as ResponseFrame).type)),
    'stdout carries wire frames only',
  );
  const logs = logLines(magid.stderr);
  t.ok(
    logs.some((line) => line.msg === 'stopping' && line.reason === 'end of input'),
    'logs go to stderr',
  );
  t.ok(logs.some((line) => line.msg === 'stopped'));

  const records = await historyAfterRestart(t, home, session);
  t.same(
    records.map((record) => record.kind),
    ['session.created', 'turn.user', 'turn.terminal'],
  );
  t.match(records[2]?.data, { turn_id: turnId, status: 'cancelled', error: null }, 'the terminal is durable');
  t.equal(provider.unexpected, 0);
});

t.test(
  'a closed stdout does not stop the cleanup: the turn ends, the lock is released, exit 0',
  async (t) => {
    const { home, workspace } = directories(t);
    const provider = await ScriptedProvider.start(t);
    const { magid, client } = await startStdio(t, { home, args: providerArgs(provider) });
    await client.initialize([]);
    const { session, turnId, request } = await runningTurn(t, client, provider, workspace);

    magid.child.stdout!.destroy();
    // Its answer is the write that finds stdout closed; stdin stays open.
    client.send('status');
    t.strictSame(await magid.waitExit(WAIT_MS), { code: 0, signal: null }, 'exits 0 with stdin still open');
    await within(request.disconnected, 'the provider to see its request end');
    t.ok(
      logLines(magid.stderr).some((line) => line.msg === 'stopping' && line.reason === 'output closed'),
      'the output failure started the cleanup',
    );

    // The second daemon takes the same home's lock: the first released it.
    const records = await historyAfterRestart(t, home, session);
    t.match(records.at(-1), { kind: 'turn.terminal', data: { turn_id: turnId, status: 'cancelled' } });
    t.equal(provider.unexpected, 0);
  },
);

t.test('every answer is flushed to a slow reader before the process exits', async (t) => {
  const { home } = directories(t);
  const { magid, client } = await startStdio(t, { home });
  await client.initialize([]);
  const answerBytes = Buffer.byteLength(`${JSON.stringify(await client.request('status'))}\n`);
  const stdout = magid.child.stdout!;
  stdout.pause();
  // Far more than a pipe holds, so most of it waits in the daemon until the reader reads, and less than the
  // 1 MiB past which the daemon would stop reading stdin and so never see its end: 768 KiB of answers.
  const pipelined = Math.floor((768 * 1024) / answerBytes);
  const ids = Array.from({ length: pipelined }, () => client.send('status'));
  client.close();
  await logged(magid, 'stopping', WAIT_MS);
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.ok(magid.running, 'the daemon waits for its output to be read');
  stdout.resume();
  const answers = await Promise.all(ids.map((id) => client.response(id, WAIT_MS)));
  t.equal(answers.filter((answer) => answer.ok).length, pipelined, 'every request was answered');
  t.strictSame(await magid.waitExit(WAIT_MS), { code: 0, signal: null });
});

t.test('SIGTERM stops it as it stops serve: the running turn fails interrupted, exit 0', async (t) => {
  const { home, workspace } = directories(t);
  const provider = await ScriptedProvider.start(t);
  const { magid, client } = await startStdio(t, { home, args: providerArgs(provider) });
  await client.initialize([]);
  const { session, turnId } = await runningTurn(t, client, provider, workspace);

  magid.child.kill('SIGTERM');
  t.strictSame(await magid.waitExit(WAIT_MS), { code: 0, signal: null }, 'exits 0');
  t.ok(logLines(magid.stderr).some((line) => line.msg === 'stopping' && line.reason === 'SIGTERM'));
  const records = await historyAfterRestart(t, home, session);
  t.match(records.at(-1), {
    kind: 'turn.terminal',
    data: { turn_id: turnId, status: 'failed', error: { code: 'interrupted' } },
  });
});

t.test('a stdio daemon whose home lock file is replaced stops with status 2', async (t) => {
  const { home } = directories(t);
  const { magid, client } = await startStdio(t, { home });
  await client.initialize([]);
  const lock = join(home, 'magid.lock');
  rmSync(lock);
  writeFileSync(lock, '');
  t.strictSame(await magid.waitExit(WAIT_MS), { code: 2, signal: null });
  t.ok(logLines(magid.stderr).some((line) => line.msg === 'stopping' && line.reason === 'ownership lost'));
});
