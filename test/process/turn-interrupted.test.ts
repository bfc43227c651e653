import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import {
  connectSocket,
  type Envelope,
  type ResponseFrame,
  type WireClient,
} from '../../client/wire-client.js';
import { ERROR_MESSAGES } from '../../core/errors.js';
import { op } from '../helpers/daemon.js';
import { stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { toolResource } from '../routes/session.resources.fixture.js';
import { confirmedExecutor } from '../routes/turn.fixture.js';
import { logLines, type MagidProcess, shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Four daemons start from the TypeScript sources, each in a few seconds: more than the default file timeout.
t.setTimeout(120_000);

/** Bound of every wait on a daemon or the provider; generous, since the machine may be busy. */
const WAIT_MS = 20_000;
const RECOVERED = 'turns interrupted by the last stop were recorded as failed';
const ARGUMENT = 'argument-kept-out-of-history-5d1c';

interface ReplayRecord {
  sequence: number;
  kind: string;
  created_at: number;
  data: Record<string, unknown> | null;
  omitted: boolean;
}

/** A request's response, waited for at most WAIT_MS. */
function requestWithin(
  client: WireClient,
  method: string,
  payload: Record<string, unknown>,
  envelope: Envelope,
): Promise<ResponseFrame> {
  return client.response(client.send(method, payload, envelope), WAIT_MS);
}

/** `promise`, or a rejection naming `what` once `ms` passed. */
function within<T>(promise: Promise<T>, what: string, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Waits (in real time, bounded) until the daemon's stderr carries the line `message`. */
async function logged(magid: MagidProcess, message: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const line = logLines(magid.stderr).find((entry) => entry.msg === message);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the log line "${message}"`);
    await sleep(20);
  }
}

async function replayAll(t: Test, client: WireClient, session: string): Promise<ReplayRecord[]> {
  const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
  t.equal(replay.next_cursor, null, 'the whole history fits one page');
  return replay.records as ReplayRecord[];
}

/**
 * A home, a socket path, a workspace and a scripted provider, for daemons started one after another:
 * `start` runs a daemon there, `connect` opens an initialized connection to it, closed with the test.
 */
async function killScene(t: Test) {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'd.sock');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const provider = await ScriptedProvider.start(t);
  const start = () =>
    startDaemon(t, {
      socket,
      home,
      args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
    });
  const connect = async (capabilities: string[]): Promise<WireClient> => {
    const { client } = await connectSocket(socket);
    t.teardown(() => client.close());
    await client.initialize(capabilities);
    return client;
  };
  return { workspace, provider, start, connect };
}

async function killed(t: Test, magid: MagidProcess): Promise<void> {
  magid.child.kill('SIGKILL');
  t.strictSame(await magid.waitExit(), { code: null, signal: 'SIGKILL' }, 'the daemon was killed');
}

t.test('a turn running when the daemon is killed is recorded interrupted by the next daemon', async (t) => {
  const { workspace, provider, start, connect } = await killScene(t);

  const first = await start();
  const client = await connect([]);
  const created = await client.call('session.create', { workspace, title: 'notes' }, { operation: op() });
  const session = created.session_id as string;
  const claim = await client.call('session.claim', {}, { session, operation: op() });
  t.strictSame(claim.snapshot, { turn: null, terminal: null });
  const control = claim.control_token as string;

  const hold = provider.hold();
  provider.script(stream([hold]));
  const accepted = await client.call(
    'turn.start',
    { prompt: 'Summarize my notes' },
    { session, control, operation: op() },
  );
  const turnId = accepted.turn_id as string;
  const request = await within(provider.nextRequest(), 'the provider request');
  t.match(request.body, {
    model: 'scripted-model',
    messages: [{ role: 'user', content: 'Summarize my notes' }],
  });
  await within(hold.reached, 'the held response');
  const running = await client.call('session.claim', {}, { session, operation: op() });
  t.match(running.snapshot, { turn: { turn_id: turnId, status: 'running' } }, 'the turn is running');
  const before = await replayAll(t, client, session);
  t.match(
    before.map((record) => record.kind),
    ['session.created', 'turn.user'],
    'the user record is committed before the kill',
  );

  await killed(t, first.magid);
  await within(request.disconnected, 'the provider to see the request end');

  const second = await start();
  t.not(second.ready.instance_id, first.ready.instance_id, 'a new daemon');
  t.match(
    await logged(second.magid, RECOVERED),
    { level: 40, turns: 1 },
    'the log says one turn was recorded',
  );

  const again = await connect([]);
  const listed = await again.call('session.list', { cursor: null, limit: 100 });
  const reclaimed = await again.call('session.claim', {}, { session, operation: op() });
  t.equal((reclaimed.snapshot as { turn: unknown }).turn, null, 'no turn runs after the restart');

  const records = await replayAll(t, again, session);
  t.strictSame(records.slice(0, before.length), before, 'every record committed before the kill is intact');
  t.equal(records.length, 3, 'one record more: the terminal');
  t.match(records[0], { kind: 'session.created', data: { title: 'notes' }, omitted: false });
  t.match(records[1], {
    kind: 'turn.user',
    data: { turn_id: turnId, prompt: 'Summarize my notes' },
    omitted: false,
  });
  t.strictSame(
    records[2]?.data,
    {
      turn_id: turnId,
      status: 'failed',
      error: { code: 'interrupted', message: ERROR_MESSAGES.interrupted },
      assistant_text: '',
      activity_dropped: 0,
      calls: [],
    },
    'the terminal says the turn failed, interrupted',
  );
  t.match(records[2], { kind: 'turn.terminal', omitted: false });
  t.ok(records[2]!.sequence > records[1]!.sequence, 'after the user record');
  t.equal(
    (listed.sessions as Array<{ updated_at: number }>)[0]?.updated_at,
    records[2]!.created_at,
    'the terminal recorded at startup moved updated_at',
  );

  provider.reply(['Done.']);
  const retried = await requestWithin(
    again,
    'turn.start',
    { prompt: 'Try again' },
    { session, control: reclaimed.control_token as string, operation: op() },
  );
  t.match(retried, { ok: true, result: { status: 'accepted' } }, 'the session is not busy');
  const terminal = await again.event('turn.terminal', WAIT_MS);
  t.match(terminal.payload, { status: 'completed', assistant_text: 'Done.' }, 'the session takes a new turn');
  t.equal(provider.unexpected, 0);
});

t.test('a dispatched application call is reported uncertain after a kill -9', async (t) => {
  const { workspace, provider, start, connect } = await killScene(t);

  const first = await start();
  const client = await connect(['application_resources_v1']);
  const created = await client.call('session.create', { workspace, title: null }, { operation: op() });
  const session = created.session_id as string;
  const claim = await client.call('session.claim', {}, { session, operation: op() });
  const control = claim.control_token as string;
  const executor = await confirmedExecutor(client);
  const tool = await client.call(
    'session.resources.register',
    { expected_revision: null, resource: toolResource('lookup') },
    { session, control, operation: op() },
  );
  const entry = tool.entry as Record<string, string>;
  const application = {
    expected_registry_revision: tool.registry_revision,
    executor_id: executor.executor_id,
    executor_generation: executor.executor_generation,
    tool_authorizations: [
      {
        resource_id: entry.resource_id,
        revision_id: entry.revision_id,
        revision_sha256: entry.revision_sha256,
      },
    ],
  };

  provider.replyToolCalls([{ id: 'call-1', name: 'lookup', arguments: JSON.stringify({ path: ARGUMENT }) }]);
  const accepted = await client.call(
    'turn.start',
    { prompt: 'Find my notes', application },
    { session, control, operation: op() },
  );
  const turnId = accepted.turn_id as string;
  const call = await client.event('turn.application_tool_call', WAIT_MS);
  t.match(call.payload, {
    turn_id: turnId,
    provider_call_id: 'call-1',
    name: 'lookup',
    arguments: { path: ARGUMENT },
  });
  const callId = call.payload.call_id as string;
  const before = await replayAll(t, client, session);
  t.match(
    before.map((record) => record.kind),
    ['session.created', 'turn.user', 'turn.call'],
    'the binding is committed before the kill',
  );

  await killed(t, first.magid);

  const second = await start();
  t.match(await logged(second.magid, RECOVERED), { turns: 1 });
  const again = await connect(['application_resources_v1']);
  const reclaimed = await again.call('session.claim', {}, { session, operation: op() });
  t.equal((reclaimed.snapshot as { turn: unknown }).turn, null, 'no turn runs after the restart');

  const records = await replayAll(t, again, session);
  t.strictSame(records.slice(0, before.length), before, 'every record committed before the kill is intact');
  t.same(
    records.map((record) => record.kind),
    ['session.created', 'turn.user', 'turn.call', 'turn.terminal'],
  );
  t.match(records[0], { kind: 'session.created', data: { title: null }, omitted: false });
  t.match(records[1]?.data, {
    turn_id: turnId,
    prompt: 'Find my notes',
    application_manifest: {
      profile: 'application_resources_v1',
      tools: [{ name: 'lookup', resource_id: entry.resource_id, revision_id: entry.revision_id }],
      accepted_executor: {
        executor_id: executor.executor_id,
        executor_generation: executor.executor_generation,
      },
    },
  });
  t.strictSame(records[2]?.data, {
    turn_id: turnId,
    call_id: callId,
    provider_call_id: 'call-1',
    name: 'lookup',
    resource_id: entry.resource_id,
    revision_id: entry.revision_id,
    revision_sha256: entry.revision_sha256,
    executor_id: executor.executor_id,
    executor_generation: executor.executor_generation,
  });
  t.strictSame(
    records[3]?.data,
    {
      turn_id: turnId,
      status: 'failed',
      error: { code: 'interrupted', message: ERROR_MESSAGES.interrupted },
      assistant_text: '',
      activity_dropped: 0,
      calls: [{ call_id: callId, status: 'failed', external_effects: 'uncertain' }],
    },
    'the dispatched call is reported with uncertain effects',
  );
  t.notMatch(JSON.stringify(records), ARGUMENT, 'arguments are never in history');
  t.equal(provider.requests.length, 1, 'the provider was asked once, never again after the restart');
  t.equal(provider.unexpected, 0);
});
