import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket, type EventFrame, type WireClient } from '../../client/wire-client.js';
import { OPERATION_LIMITS } from '../../core/limits.js';
import { op } from '../helpers/daemon.js';
import { stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { toolResource } from '../routes/session.resources.fixture.js';
import { confirmedExecutor, resultPayload } from '../routes/turn.fixture.js';
import { logLines, shortTempDir, startDaemon } from './spawn-daemon.js';

// Filling the daemon's whole table takes some 131,072 mutations: tens of seconds on a busy machine.
t.setTimeout(240_000);

/** Bound of every wait on a response or an event; generous, since the machine is kept busy on purpose. */
const WAIT_MS = 60_000;
/** Requests one flooding connection keeps unanswered: the daemon reads no further past its own bound. */
const WINDOW = 256;
/** More refused claims than the whole table held when every refusal was kept in it. */
const REFUSED_CLAIMS = 17_000;
const TABLE_FULL = 'the operation table is full: mutations are refused, recovery methods use the reserve';
const SHARE_HELD = 'a connection holds its share of the operation table';

/**
 * Sends `count` requests made by `request` (its index in, method, payload and envelope out) on `client`,
 * WINDOW at a time, and counts their answers by code ('ok' for a success). Stops early when `stop` says so.
 */
async function pipelined(
  client: WireClient,
  count: number,
  request: (index: number) => Parameters<WireClient['send']>,
  stop: () => boolean = () => false,
): Promise<Map<string, number>> {
  const codes = new Map<string, number>();
  for (let sent = 0; sent < count && !stop(); ) {
    const ids: string[] = [];
    for (const end = Math.min(count, sent + WINDOW); sent < end; sent++)
      ids.push(client.send(...request(sent)));
    for (const id of ids) {
      const answer = await client.response(id, WAIT_MS);
      const code = answer.ok ? 'ok' : (answer.error?.code ?? 'none');
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
  }
  return codes;
}

t.test(
  'while one client floods the operation table, another still recovers and stops its turn',
  async (t) => {
    const root = shortTempDir(t);
    const socket = join(root, 'd.sock');
    const workspace = join(root, 'ws');
    mkdirSync(workspace);
    const provider = await ScriptedProvider.start(t);
    const { magid } = await startDaemon(t, {
      socket,
      home: join(root, 'home'),
      args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
    });
    const connect = async (options: { keepHistory?: boolean } = {}) => {
      const { client } = await connectSocket(socket, options);
      t.teardown(() => client.close());
      await client.initialize(['application_resources_v1']);
      return client;
    };

    // The application: its session, its executor, its tool, and a turn whose model calls the tool.
    const application = await connect();
    const created = await application.call(
      'session.create',
      { workspace, title: 'notes' },
      { operation: op() },
    );
    const session = created.session_id as string;
    const claim = await application.call('session.claim', {}, { session, operation: op() });
    const executor = await confirmedExecutor(application);
    const tool = await application.call(
      'session.resources.register',
      { expected_revision: null, resource: toolResource('lookup') },
      { session, control: claim.control_token as string, operation: op() },
    );
    const entry = tool.entry as Record<string, string>;
    provider.replyToolCalls([{ id: 'call-1', name: 'lookup', arguments: '{"path":"a"}' }]);
    const continuation = provider.hold();
    provider.script(stream([continuation]));
    const accepted = await application.call(
      'turn.start',
      {
        prompt: 'Find my notes',
        application: {
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
        },
      },
      { session, control: claim.control_token as string, operation: op() },
    );
    const turnId = accepted.turn_id as string;
    const call: EventFrame = await application.event('turn.application_tool_call', WAIT_MS);

    // The flooding client: refused claims of a session that does not exist, pipelined on one connection...
    const flooders = await Promise.all(Array.from({ length: 4 }, () => connect({ keepHistory: false })));
    const refused = await pipelined(flooders[0]!, REFUSED_CLAIMS, () => [
      'session.claim',
      {},
      { session: 'ses_none', operation: op() },
    ]);
    t.same([...refused], [['unknown_session', REFUSED_CLAIMS]], 'every claim refused for itself');
    // ...then successful mutations, executor rotations, on four connections until the whole table is full.
    const rotators = await Promise.all(flooders.map((flooder) => confirmedExecutor(flooder)));
    let recovered = false;
    const rotate = (index: number) =>
      pipelined(
        flooders[index]!,
        Number.MAX_SAFE_INTEGER,
        () => [
          'executor.rotate',
          {
            executor_id: rotators[index]!.executor_id,
            executor_generation: rotators[index]!.executor_generation,
          },
          { operation: op() },
        ],
        () => recovered,
      );
    const flooding = Promise.all(flooders.map((_, index) => rotate(index)));
    // Awaited once the application has recovered; a failure before that ends the test, not the process.
    flooding.catch(() => {});
    const status = async (client: WireClient) =>
      (
        (await client.call('status')) as {
          retention: Record<string, { saturated?: boolean; retained?: number }>;
        }
      ).retention;
    for (let full = false; !full; ) {
      const answer = await application.request(
        'session.create',
        { workspace, title: null },
        { operation: op() },
      );
      full = !answer.ok;
      if (full) t.equal(answer.error?.code, 'limit_exceeded', "the application's own mutations are refused");
    }
    t.match(await status(application), {
      operations: { saturated: true },
      connections_at_share: Number,
    });
    t.ok(
      (await status(application)).operations!.retained! >= OPERATION_LIMITS.table_operations,
      'the table is full',
    );

    // While the flood goes on, the application drops its connection and recovers as section 6 says.
    application.close();
    const again = await connect();
    const resumed = await again.request(
      'executor.resume',
      { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
      { operation: op() },
    );
    t.ok(resumed.ok, 'executor.resume gets through');
    const generation = resumed.result?.executor_generation as number;
    t.match(resumed.result?.pending_calls, [
      { call_id: call.payload.call_id, session_id: session, turn_id: turnId },
    ]);
    const reclaimed = await again.request('session.claim', {}, { session, operation: op() });
    t.ok(reclaimed.ok, 'session.claim after the reconnect gets through');
    t.match(reclaimed.result?.snapshot, { turn: { turn_id: turnId, status: 'running' } });
    const control = reclaimed.result?.control_token as string;
    const submitted = await again.request(
      'turn.application_tool_result',
      resultPayload({ ...executor, executor_generation: generation }, call),
      { session, operation: op() },
    );
    t.same(
      submitted.result,
      { call_id: call.payload.call_id, status: 'accepted' },
      'the tool result gets through',
    );
    await continuation.reached;
    const stopped = await again.request(
      'turn.stop',
      { turn_id: turnId },
      { session, control, operation: op() },
    );
    t.same(stopped.result, { turn_id: turnId, status: 'cancelling' }, 'turn.stop gets through');
    const terminal = await again.event('turn.terminal', WAIT_MS);
    t.match(terminal.payload, { turn_id: turnId, status: 'cancelled' }, 'and the turn is cancelled');
    t.match(await status(again), { operations: { saturated: true }, recovery_reserve: { retained: 4 } });

    recovered = true;
    const floods = await flooding;
    const total = (code: string) => floods.reduce((sum, codes) => sum + (codes.get(code) ?? 0), 0);
    t.ok(
      total('ok') > 0 && total('limit_exceeded') > 0,
      'the flood was admitted up to its room, then refused',
    );
    t.same(
      new Set(floods.flatMap((codes) => [...codes.keys()])),
      new Set(['ok', 'limit_exceeded']),
      'and nothing else',
    );

    const lines = logLines(magid.stderr);
    t.same(
      lines.filter((line) => line.msg === TABLE_FULL).map((line) => line.level),
      [40],
      'one warning that the table is full, whatever the refusals',
    );
    t.equal(
      lines.filter((line) => line.msg === SHARE_HELD).length,
      1,
      'one that a connection holds its share',
    );
    t.equal(provider.unexpected, 0);
  },
);
