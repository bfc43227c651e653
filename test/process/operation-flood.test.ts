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
t.setTimeout(420_000);

/** Bound of every wait on a response or an event; generous, since the machine is kept busy on purpose. */
const WAIT_MS = 120_000;
/** Connections that flood, each pipelining its requests. */
const FLOODERS = 64;
/** Requests one flooding connection keeps unanswered: the daemon reads no further past its own bound. */
const WINDOW = 256;
/** The text of the turn whose terminal every claim of the shared session answers in its snapshot. */
const LONG_TEXT = 'x'.repeat(20_000);
const TABLE_FULL =
  'the operation table is full: mutations are refused, recovery methods sent by right use their slots';
const SLOT_FULL = 'a recovery slot is full: the recovery methods of its session or executor are refused';

type Retention = {
  operations: { retained: number; bytes: number; saturated: boolean };
  recovery_slots: { slots: number; retained: number; bytes: number; full: number };
  refusals: { retained: number };
};

/** Answers counted by method, then by code ('ok' for a success). */
class Tally {
  readonly byMethod = new Map<string, Map<string, number>>();

  count(method: string, code: string): void {
    const codes = this.byMethod.get(method) ?? new Map<string, number>();
    codes.set(code, (codes.get(code) ?? 0) + 1);
    this.byMethod.set(method, codes);
  }

  total(method: string, code?: string): number {
    const codes = this.byMethod.get(method);
    if (!codes) return 0;
    if (code !== undefined) return codes.get(code) ?? 0;
    return [...codes.values()].reduce((sum, count) => sum + count, 0);
  }

  codes(): Set<string> {
    return new Set([...this.byMethod.values()].flatMap((codes) => [...codes.keys()]));
  }
}

/** A request answered within WAIT_MS, however busy the daemon is. */
function ask(client: WireClient, ...request: Parameters<WireClient['send']>) {
  return client.response(client.send(...request), WAIT_MS);
}

/**
 * Sends the requests `request` makes (its index in, method, payload and envelope out) on `client`, WINDOW
 * at a time, counting their answers in `tally`, until `stop` says so.
 */
async function pipelined(
  client: WireClient,
  tally: Tally,
  request: (index: number) => Parameters<WireClient['send']>,
  stop: () => boolean,
): Promise<void> {
  for (let sent = 0; !stop(); ) {
    const ids: Array<[string, string]> = [];
    for (const end = sent + WINDOW; sent < end; sent++) {
      const args = request(sent);
      ids.push([client.send(...args), args[0]]);
    }
    for (const [id, method] of ids) {
      const answer = await client.response(id, WAIT_MS);
      tally.count(method, answer.ok ? 'ok' : (answer.error?.code ?? 'none'));
    }
  }
}

t.test(
  'while 64 connections flood the operation table, a client still stops its turn, claims, resumes and submits',
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
    const status = async (client: WireClient) =>
      ((await ask(client, 'status')).result as { retention: Retention }).retention;

    // The session every flooder claims: its last turn wrote 20,000 bytes, which each claim's snapshot holds.
    const owner = await connect();
    const shared = (await owner.call('session.create', { workspace, title: 'shared' }, { operation: op() }))
      .session_id as string;
    const ownerClaim = await owner.call('session.claim', {}, { session: shared, operation: op() });
    provider.reply([LONG_TEXT]);
    await owner.call(
      'turn.start',
      { prompt: 'Write' },
      { session: shared, control: ownerClaim.control_token as string, operation: op() },
    );
    await owner.event('turn.terminal', WAIT_MS);

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

    // The flood: 64 connections, each with its own session and executor, pipelining claims of the shared
    // session and of their own, claims of a session that does not exist, and executor rotations.
    const flooders = await Promise.all(
      Array.from({ length: FLOODERS }, async () => {
        const client = await connect({ keepHistory: false });
        const own = (await client.call('session.create', { workspace, title: null }, { operation: op() }))
          .session_id as string;
        return { client, own, executor: await confirmedExecutor(client) };
      }),
    );
    const tally = new Tally();
    let recovered = false;
    const flooding = Promise.all(
      flooders.map(({ client, own, executor: rotated }) =>
        pipelined(
          client,
          tally,
          (index): Parameters<WireClient['send']> => {
            // One in sixteen claims the shared session (its answer carries 20,000 bytes), one in four a
            // session that does not exist, one in four its own; the rest are executor rotations.
            if (index % 16 === 0) return ['session.claim', {}, { session: shared, operation: op() }];
            if (index % 4 === 1) return ['session.claim', {}, { session: 'ses_none', operation: op() }];
            if (index % 4 === 2) return ['session.claim', {}, { session: own, operation: op() }];
            return [
              'executor.rotate',
              { executor_id: rotated.executor_id, executor_generation: rotated.executor_generation },
              { operation: op() },
            ];
          },
          () => recovered,
        ),
      ),
    );
    // Awaited once the application has recovered; a failure before that ends the test, not the process.
    flooding.catch(() => {});

    // What the table and the slots hold at their peak, read while the flood goes on.
    const monitor = await connect();
    const peak = { table: 0, tableBytes: 0, slots: 0, slotted: 0, slottedBytes: 0, slotsFull: 0 };
    const sample = async () => {
      const retention = await status(monitor);
      peak.table = Math.max(peak.table, retention.operations.retained);
      peak.tableBytes = Math.max(peak.tableBytes, retention.operations.bytes);
      peak.slots = Math.max(peak.slots, retention.recovery_slots.slots);
      peak.slotted = Math.max(peak.slotted, retention.recovery_slots.retained);
      peak.slottedBytes = Math.max(peak.slottedBytes, retention.recovery_slots.bytes);
      peak.slotsFull = Math.max(peak.slotsFull, retention.recovery_slots.full);
      return retention;
    };
    // The application recovers once the table is full and the flood has filled slots of its own.
    for (;;) {
      const retention = await sample();
      if (retention.operations.saturated && retention.recovery_slots.full >= FLOODERS) break;
    }
    const refusedOwn = await ask(
      application,
      'session.create',
      { workspace, title: null },
      { operation: op() },
    );
    t.equal(refusedOwn.error?.code, 'limit_exceeded', "the application's other mutations are refused");
    let sampling = true;
    const sampler = (async () => {
      while (sampling) await sample();
    })();

    // While the flood goes on, the application drops its connection and recovers as section 6 says.
    const recovery = new Tally();
    const recover = async (client: WireClient, ...args: Parameters<WireClient['send']>) => {
      const answer = await ask(client, ...args);
      recovery.count(args[0], answer.ok ? 'ok' : (answer.error?.code ?? 'none'));
      return answer;
    };
    application.close();
    const again = await connect();
    const resumed = await recover(
      again,
      'executor.resume',
      { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
      { operation: op() },
    );
    t.ok(resumed.ok, 'executor.resume gets through');
    const generation = resumed.result?.executor_generation as number;
    t.match(resumed.result?.pending_calls, [
      { call_id: call.payload.call_id, session_id: session, turn_id: turnId },
    ]);
    const reclaimed = await recover(again, 'session.claim', {}, { session, operation: op() });
    t.ok(reclaimed.ok, 'session.claim from the new connection gets through');
    t.match(reclaimed.result?.snapshot, { turn: { turn_id: turnId, status: 'running' } });
    const control = reclaimed.result?.control_token as string;
    const submitted = await recover(
      again,
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
    const stopped = await recover(
      again,
      'turn.stop',
      { turn_id: turnId },
      { session, control, operation: op() },
    );
    t.same(stopped.result, { turn_id: turnId, status: 'cancelling' }, 'turn.stop gets through');
    const terminal = await again.event('turn.terminal', WAIT_MS);
    t.match(terminal.payload, { turn_id: turnId, status: 'cancelled' }, 'and the turn is cancelled');
    const closed = await recover(again, 'session.close', {}, { session, control, operation: op() });
    t.same(closed.result, { status: 'closed' }, 'session.close gets through');
    const after = await sample();
    t.ok(after.operations.saturated, 'the table was full all along');

    recovered = true;
    sampling = false;
    await Promise.all([flooding, sampler]);
    t.same([...recovery.codes()], ['ok'], 'no recovery call of the application was refused');
    t.same(tally.codes(), new Set(['ok', 'limit_exceeded', 'unknown_session']), 'the flood got nothing else');
    t.ok(
      tally.total('session.claim', 'ok') > 0 && tally.total('executor.rotate', 'ok') > 0,
      'the flood was admitted up to its room',
    );
    t.ok(tally.total('session.claim', 'limit_exceeded') > 0, 'claims past their slots were refused for room');
    t.ok(
      tally.total('session.claim', 'unknown_session') > 0,
      'and claims of no session refused for themselves',
    );
    t.ok(peak.table >= OPERATION_LIMITS.table_operations, 'the table was full');
    t.ok(
      peak.slotted <= (FLOODERS + 2) * OPERATION_LIMITS.session_slot_operations + 3,
      "the flood's claims took no more than the slots of the sessions it claimed",
    );

    const lines = logLines(magid.stderr);
    t.same(
      lines.filter((line) => line.msg === TABLE_FULL).map((line) => line.level),
      [40],
      'one warning that the table is full, whatever the refusals',
    );
    t.equal(lines.filter((line) => line.msg === SLOT_FULL).length, 1, 'one that a slot is full');
    t.equal(provider.unexpected, 0);

    const figures = {
      flood: {
        connections: FLOODERS,
        recovery_calls: tally.total('session.claim'),
        recovery_ok: tally.total('session.claim', 'ok'),
        recovery_refused_for_room: tally.total('session.claim', 'limit_exceeded'),
        recovery_refused_unknown_session: tally.total('session.claim', 'unknown_session'),
        other_mutations: tally.total('executor.rotate'),
        other_refused_for_room: tally.total('executor.rotate', 'limit_exceeded'),
      },
      application: {
        recovery_calls: [...recovery.byMethod.keys()].reduce(
          (sum, method) => sum + recovery.total(method),
          0,
        ),
        refused: [...recovery.byMethod.keys()].reduce(
          (sum, method) => sum + recovery.total(method) - recovery.total(method, 'ok'),
          0,
        ),
      },
      peak: {
        table_outcomes: peak.table,
        table_mib: Number((peak.tableBytes / 1_048_576).toFixed(1)),
        slots: peak.slots,
        slots_full: peak.slotsFull,
        slot_outcomes: peak.slotted,
        slot_kib: Number((peak.slottedBytes / 1_024).toFixed(1)),
      },
    };
    t.comment(`flood figures: ${JSON.stringify(figures)}`);
  },
);
