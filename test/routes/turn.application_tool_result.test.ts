import t, { type Test } from 'tap';
import type { EventFrame, WireClient } from '../../client/wire-client.js';
import { PROFILE_LIMITS } from '../../core/limits.js';
import { op, type TestDaemon, TRANSPORTS, type Transport } from '../helpers/daemon.js';
import { holdDurableWrite } from '../helpers/durable-writes.js';
import type { ScriptedProvider } from '../helpers/scripted-provider.js';
import { type Controller, codeOf, resultOf, takeOver } from './session.resources.fixture.js';
import {
  type ApplicationSession,
  applicationSession,
  eventCount,
  startTurn,
  submitResult,
  turnDaemon,
} from './turn.fixture.js';

/**
 * A result the daemon admitted is the call's ending, whatever ends the turn while it is being made durable:
 * each test holds the result's write (the seam), ends the turn or shakes its authority meanwhile, then lets
 * the write through.
 */

interface Race {
  daemon: TestDaemon;
  provider: ScriptedProvider;
  app: ApplicationSession;
  turnId: string;
  calls: EventFrame[];
  /** The executor's acknowledgment of the first call's result, answered once its write is let through. */
  acknowledged: Promise<string>;
  release(): void;
}

/** A turn whose model asked for `count` lookups; the first one's result is admitted and its write held. */
async function raceOf(t: Test, transport: Transport, count: number): Promise<Race> {
  const { daemon, provider } = await turnDaemon(t);
  const app = await applicationSession(daemon, transport);
  provider.replyToolCalls(
    Array.from({ length: count }, (_, i) => ({ id: `c${i + 1}`, name: 'lookup', arguments: '{"path":"a"}' })),
  );
  provider.reply(['done']);
  const accepted = resultOf<{ turn_id: string }>(
    await startTurn(app.who, { prompt: 'go', application: app.application }),
  );
  const calls: EventFrame[] = [];
  for (let i = 0; i < count; i++) calls.push(await app.who.client.event('turn.application_tool_call'));
  const held = holdDurableWrite(daemon.app.history, 'turn.call_result');
  const acknowledged = submitResult(app.who.client, app.who.session, app.executor, calls[0]!).then(codeOf);
  await held.reached;
  return { daemon, provider, app, turnId: accepted.turn_id, calls, acknowledged, release: held.release };
}

function evidence(who: Controller, turnId: string) {
  return who.client.call(
    'turn.application_evidence',
    { turn_id: turnId },
    { session: who.session, control: who.control },
  ) as Promise<{ calls: Array<Record<string, unknown>> }>;
}

async function terminalRecord(client: WireClient, session: string) {
  const { records } = (await client.call('session.replay', { cursor: null, limit: 100 }, { session })) as {
    records: Array<{ kind: string; data: { calls: Array<Record<string, unknown>> } }>;
  };
  return records.find((record) => record.kind === 'turn.terminal')?.data;
}

function cancelsOf(client: WireClient, callId: unknown): number {
  return client.received
    .flatMap((text) => text.split('\n').filter(Boolean))
    .map((line) => JSON.parse(line) as { event?: string; payload?: { call_id?: string } })
    .filter((frame) => frame.event === 'turn.application_tool_cancel' && frame.payload?.call_id === callId)
    .length;
}

/** What every race must show for the first call: its result, reported, and no cancel for it. */
async function reportedDespite(
  t: Test,
  race: Race,
  watcher: Controller,
  terminal: EventFrame,
): Promise<void> {
  const first = race.calls[0]!.payload.call_id;
  t.equal(await race.acknowledged, 'ok', 'the executor was told its result was accepted');
  t.equal(cancelsOf(race.app.who.client, first), 0, 'and was never told to cancel that call');
  const calls = (await evidence(watcher, race.turnId)).calls;
  t.match(
    calls.find((call) => call.call_id === first),
    { status: 'succeeded', external_effects: 'reported', wait_kind: null, remaining_ms: null },
    'evidence shows the result',
  );
  const record = await terminalRecord(watcher.client, watcher.session);
  t.match(
    record?.calls.find((call) => call.call_id === first),
    { status: 'succeeded', external_effects: 'reported' },
    'so does the durable terminal',
  );
  t.match(terminal.payload, { turn_id: race.turnId });
}

for (const transport of TRANSPORTS) {
  t.test(`an admitted result is its call's ending (${transport})`, async (t) => {
    t.test('turn.stop while the result is being recorded', async (t) => {
      const race = await raceOf(t, transport, 1);
      const { who } = race.app;
      const stop = await who.client.request(
        'turn.stop',
        { turn_id: race.turnId },
        { session: who.session, control: who.control, operation: op() },
      );
      t.equal(codeOf(stop), 'ok');
      race.release();
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'cancelled', error: null });
      await reportedDespite(t, race, who, terminal);
      t.equal(race.provider.requests.length, 1, 'the model was not continued after the stop');
    });

    t.test('session.close while the result is being recorded', async (t) => {
      const race = await raceOf(t, transport, 1);
      const { who } = race.app;
      const closed = await who.client.call(
        'session.close',
        {},
        { session: who.session, control: who.control, operation: op() },
      );
      t.same(closed, { status: 'closing' });
      const watcher = await takeOver(race.daemon, transport, who);
      race.release();
      const terminal = await watcher.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'cancelled', error: null });
      await reportedDespite(t, race, watcher, terminal);
    });

    t.test('a control takeover while the result is being recorded changes nothing for it', async (t) => {
      const race = await raceOf(t, transport, 1);
      const watcher = await takeOver(race.daemon, transport, race.app.who);
      race.release();
      const terminal = await watcher.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'completed', assistant_text: 'done' });
      await reportedDespite(t, race, watcher, terminal);
      t.equal(race.provider.requests.length, 2, 'the model continued from the result');
    });

    t.test('an executor resume elsewhere while the result is being recorded', async (t) => {
      const race = await raceOf(t, transport, 1);
      const { executor } = race.app;
      const elsewhere = await race.daemon.connect(transport);
      const resumed = await elsewhere.call(
        'executor.resume',
        { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
        { operation: op() },
      );
      t.same(resumed.pending_calls, [], 'a call whose result is being recorded is not pending');
      race.release();
      const terminal = await race.app.who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'completed' });
      await reportedDespite(t, race, race.app.who, terminal);
      t.equal(cancelsOf(elsewhere, race.calls[0]!.payload.call_id), 0);
    });

    t.test("another call's timeout while the result is being recorded", async (t) => {
      const race = await raceOf(t, transport, 2);
      const { who } = race.app;
      race.daemon.clock.advance(PROFILE_LIMITS.tool_timeout_ms_default);
      race.release();
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'failed', error: { code: 'tool_timeout' } });
      await reportedDespite(t, race, who, terminal);
      const second = race.calls[1]!.payload.call_id;
      t.equal(cancelsOf(who.client, second), 1, 'the call that timed out is cancelled');
      t.match(
        (await evidence(who, race.turnId)).calls.find((call) => call.call_id === second),
        {
          status: 'failed',
          external_effects: 'uncertain',
        },
      );
      t.equal(eventCount(who.client, 'turn.application_tool_cancel'), 1, 'and only that one');
    });
  });
}
