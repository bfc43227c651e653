import pino from 'pino';
import t, { type Test } from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import type { OperationBounds } from '../../core/operations/operation-ledger.js';
import { claimedSession, op, startDaemon, TRANSPORTS, type Transport } from '../helpers/daemon.js';
import { stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { codeOf, resultOf } from '../routes/session.resources.fixture.js';
import { applicationSession, startTurn, submitResult } from '../routes/turn.fixture.js';

const LARGE = 1_000_000_000;
const TABLE_FULL =
  'the operation table is full: mutations are refused, recovery methods sent by right use their slots';
/** Small enough to fill in a test: the table, a share of it, the recovery slots, the refusals. */
const BOUNDS: OperationBounds = {
  table: { operations: 40, bytes: LARGE },
  connection: { operations: 20, bytes: LARGE },
  sessionSlot: { operations: 4, bytes: LARGE },
  executorSlot: { operations: 3, bytes: LARGE },
  refusals: 8,
  connectionRefusals: 4,
  retentionMs: 600_000,
};

async function smallTableDaemon(t: Test) {
  const provider = await ScriptedProvider.start(t);
  const logs: Array<{ level: number; msg: string; bound?: string }> = [];
  const daemon = await startDaemon(t, {
    provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
    operationBounds: BOUNDS,
    logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
  });
  return { daemon, provider, logs };
}

/** Session creations on `client` until one is refused; returns how many were admitted and the refusal. */
async function createUntilRefused(client: WireClient, workspace: string) {
  for (let created = 0; ; created++) {
    const answer = await client.request('session.create', { workspace, title: 'flood' }, { operation: op() });
    if (!answer.ok) return { created, error: answer.error };
  }
}

const status = async (client: WireClient) =>
  (await client.call('status')) as { retention: Record<string, Record<string, unknown> | number> };

for (const transport of TRANSPORTS) {
  t.test(`a full operation table (${transport})`, async (t) => {
    t.test('refuses other mutations while every recovery method gets through', async (t) => {
      const { daemon, provider, logs } = await smallTableDaemon(t);
      const app = await applicationSession(daemon, transport);
      const { who, executor } = app;
      const confirming = await daemon.connect(transport);
      const spare = resultOf<{ executor_id: string; resume_secret: string }>(
        await confirming.request('executor.create', {}, { operation: op() }),
      );
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      const hold = provider.hold();
      provider.script(stream([hold]));
      const accepted = resultOf<{ turn_id: string }>(
        await startTurn(who, { prompt: 'go', application: app.application }),
      );
      const call = await who.client.event('turn.application_tool_call');

      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const flood = await createUntilRefused(first, daemon.workspace);
      t.match(flood, { created: 20, error: { message: 'this connection retains its share of operations' } });
      const rest = await createUntilRefused(second, daemon.workspace);
      t.match(rest, { error: { code: 'limit_exceeded', message: 'too many operations are retained' } });
      t.match((await status(who.client)).retention.operations, { retained: 40, bound: 40, saturated: true });
      t.equal(
        codeOf(
          await who.client.request(
            'session.create',
            { workspace: daemon.workspace, title: null },
            { operation: op() },
          ),
        ),
        'limit_exceeded',
        'another mutation of the application is refused',
      );

      const resultOperation = op();
      t.equal(codeOf(await submitResult(who.client, who.session, executor, call, {}, resultOperation)), 'ok');
      await provider.nextRequest();
      await provider.nextRequest();
      const stopped = await who.client.request(
        'turn.stop',
        { turn_id: accepted.turn_id },
        { session: who.session, control: who.control, operation: op() },
      );
      t.same(resultOf(stopped), { turn_id: accepted.turn_id, status: 'cancelling' });
      t.match(
        (await who.client.event('turn.terminal')).payload,
        { status: 'cancelled' },
        'the turn was cancelled',
      );
      const controlled = { session: who.session, control: who.control };
      t.equal(
        codeOf(await who.client.request('session.release', {}, { ...controlled, operation: op() })),
        'ok',
      );
      const claimed = resultOf<{ control_token: string }>(
        await who.client.request('session.claim', {}, { session: who.session, operation: op() }),
      );
      const closed = await who.client.request(
        'session.close',
        {},
        { session: who.session, control: claimed.control_token, operation: op() },
      );
      t.same(resultOf(closed), { status: 'closed' });
      t.equal(
        codeOf(
          await confirming.request(
            'executor.confirm',
            { executor_id: spare.executor_id, resume_secret: spare.resume_secret },
            { operation: op() },
          ),
        ),
        'ok',
      );
      const elsewhere = await daemon.connect(transport);
      const resumed = resultOf<{ executor_generation: number }>(
        await elsewhere.request(
          'executor.resume',
          { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
          { operation: op() },
        ),
      );
      const released = await elsewhere.request(
        'executor.release',
        { executor_id: executor.executor_id, executor_generation: resumed.executor_generation },
        { operation: op() },
      );
      t.equal(codeOf(released), 'ok');
      t.match(
        await elsewhere.call('operation.lookup', { operation_id: resultOperation }),
        { status: 'completed', method: 'turn.application_tool_result' },
        'a recovery outcome in a slot is looked up like any other',
      );
      t.match((await status(who.client)).retention, {
        operations: { retained: 40 },
        recovery_slots: { slots: 3, retained: 8, full: 0 },
        connections_at_share: 1,
      });

      const full = logs.filter((line) => line.bound === 'operations');
      t.same(
        full.map((line) => [line.level, line.msg]),
        [[40, TABLE_FULL]],
        'one line for all the refusals',
      );
      daemon.clock.advance(600_000);
      t.match((await status(who.client)).retention.operations, { saturated: false });
      t.same(
        logs.filter((line) => line.bound === 'operations').map((line) => line.msg),
        [TABLE_FULL, 'the operation table has room again'],
      );
      t.equal(codeOf(await claimedRequest(first, daemon.workspace)), 'ok', 'the flooder has room again too');
    });

    t.test('gives each session and executor its own slot, used only by right', async (t) => {
      const { daemon, logs } = await smallTableDaemon(t);
      const victimClient = await daemon.connect(transport);
      const victim = await claimedSession(victimClient, daemon.workspace);
      const flooder = await daemon.connect(transport);
      const other = await claimedSession(flooder, daemon.workspace);
      await createUntilRefused(flooder, daemon.workspace);
      await createUntilRefused(await daemon.connect(transport), daemon.workspace);
      const claims = [];
      for (let i = 0; i < 6; i++)
        claims.push(await flooder.request('session.claim', {}, { session: other.session, operation: op() }));
      t.same(
        claims.map(codeOf),
        ['ok', 'ok', 'ok', 'ok', 'limit_exceeded', 'limit_exceeded'],
        "the flooder's claims of its own session fill that session's slot",
      );
      t.match(claims[4], {
        ok: false,
        error: { message: 'this session or executor retains its room for recovery' },
      });
      t.equal(
        codeOf(
          await flooder.request(
            'turn.stop',
            { turn_id: 'turn_none' },
            { session: victim.session, control: 'not-the-token', operation: op() },
          ),
        ),
        'limit_exceeded',
        "without the victim's token, a stop has only the table's room",
      );
      t.equal(
        codeOf(
          await victimClient.request(
            'session.release',
            {},
            { session: victim.session, control: victim.control, operation: op() },
          ),
        ),
        'ok',
        "the victim's own slot is untouched",
      );
      const again = await daemon.connect(transport);
      t.equal(
        codeOf(await again.request('session.claim', {}, { session: victim.session, operation: op() })),
        'ok',
        'and a claim from a new connection gets through',
      );
      t.match((await status(again)).retention.recovery_slots, { slots: 2, retained: 6, full: 1 });
      t.same(
        logs.filter((line) => line.bound === 'recovery_slot').map((line) => [line.level, line.msg]),
        [[40, 'a recovery slot is full: the recovery methods of its session or executor are refused']],
      );
    });

    t.test('keeps refusals apart: a flood of them leaves the table and the others alone', async (t) => {
      const { daemon, logs } = await smallTableDaemon(t);
      const flooder = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const kept = op();
      t.equal(
        codeOf(await other.request('session.claim', {}, { session: 'ses_missing', operation: kept })),
        'unknown_session',
      );
      const ids = Array.from({ length: 200 }, () => op());
      const answers = [];
      // Pipelined ten at a time: each holds room in the table until it is refused, and the share is 20.
      for (let from = 0; from < ids.length; from += 10) {
        const batch = ids.slice(from, from + 10);
        answers.push(
          ...(await Promise.all(
            batch.map((operation) =>
              flooder.request('session.claim', {}, { session: 'ses_missing', operation }),
            ),
          )),
        );
      }
      t.same(new Set(answers.map(codeOf)), new Set(['unknown_session']), 'every one refused for itself');
      t.match((await status(flooder)).retention, {
        operations: { retained: 0 },
        refusals: { retained: 5, bound: 8 },
        connections_at_share: 1,
      });
      t.same(await flooder.call('operation.lookup', { operation_id: ids[0]! }), {
        operation_id: ids[0],
        method: null,
        status: 'unknown',
        result: null,
        error: null,
      });
      t.match(await flooder.call('operation.lookup', { operation_id: ids[199]! }), {
        method: 'session.claim',
        status: 'failed',
        error: { code: 'unknown_session' },
      });
      t.equal(
        codeOf(await flooder.request('session.claim', {}, { session: 'ses_missing', operation: ids[199]! })),
        'operation_already_known',
      );
      t.match(
        await other.call('operation.lookup', { operation_id: kept }),
        { status: 'failed' },
        'kept for others',
      );
      const created = await claimedSession(other, daemon.workspace);
      t.ok(created.control, "the table's room was untouched");
      t.same(
        logs.filter((line) => line.bound === 'operation_share').map((line) => line.msg),
        ['a connection holds its share of the operation table'],
      );
    });
  });
}

/** A session.create on `client`. */
function claimedRequest(client: WireClient, workspace: string) {
  return client.request('session.create', { workspace, title: null }, { operation: op() });
}

export type { Transport };
