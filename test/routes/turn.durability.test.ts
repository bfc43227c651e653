import t from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { ERROR_MESSAGES } from '../../core/errors.js';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { failDurableWrite, failDurableWritesOf } from '../helpers/durable-writes.js';
import { codeOf, resultOf } from './session.resources.fixture.js';
import { applicationSession, eventCount, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

/*
 * A turn's durable writes are, in order: the user record, the call's binding, its result, the terminal.
 * Each test makes one of them fail as a full disk would, and shows that what depends on it never happened.
 */

const replay = async (client: WireClient, session: string) =>
  (await client.call('session.replay', { cursor: null, limit: 100 }, { session })).records as Array<{
    kind: string;
    data: Record<string, unknown>;
  }>;

const replayKinds = async (client: WireClient, session: string) =>
  (await replay(client, session)).map((record) => record.kind);

for (const transport of TRANSPORTS) {
  t.test(`each turn record is durable before what depends on it (${transport})`, async (t) => {
    t.test('no acceptance without the user record: the session stays free', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      failDurableWrite(daemon.app.history, 1);
      t.equal(codeOf(await startTurn(who, { prompt: 'go', application })), 'internal_error');
      t.equal(eventCount(who.client, 'turn.started'), 0, 'no worker started');
      t.equal(provider.requests.length, 0, 'the provider was never asked');
      provider.reply(['fine']);
      t.equal(
        codeOf(await startTurn(who, { prompt: 'again', application })),
        'ok',
        'the next turn is admitted',
      );
      const terminal = await who.client.event('turn.terminal');
      t.equal(terminal.payload.status, 'completed');
    });

    t.test('no dispatch without the binding', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]);
      failDurableWrite(daemon.app.history, 2);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'failed', error: { code: 'internal_error' } });
      t.equal(
        eventCount(who.client, 'turn.application_tool_call'),
        0,
        'the executor was never sent the call',
      );
      t.same(await replayKinds(who.client, who.session), ['session.created', 'turn.user', 'turn.terminal']);
    });

    t.test('no acknowledgment and no continuation without the result', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, executor, application } = await applicationSession(daemon, transport);
      provider.replyToolCalls([{ id: 'c1', name: 'lookup', arguments: '{"path":"a"}' }]).reply(['never']);
      failDurableWrite(daemon.app.history, 3);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const call = await who.client.event('turn.application_tool_call');
      t.equal(codeOf(await submitResult(who.client, who.session, executor, call)), 'internal_error');
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'failed', error: { code: 'internal_error' } });
      t.equal(provider.requests.length, 1, 'the provider was not continued');
      t.notOk((await replayKinds(who.client, who.session)).includes('turn.call_result'));
    });

    t.test(
      'a terminal that cannot be recorded is told, looked up and kept as the next start records it',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, application } = await applicationSession(daemon, transport);
        provider.reply(['done']);
        failDurableWritesOf(daemon.app.history, 'turn.terminal');
        const operation = op();
        const accepted = resultOf<{ turn_id: string }>(
          await startTurn(who, { prompt: 'go', application }, operation),
        );
        const terminal = await who.client.event('turn.terminal');
        const told = {
          turn_id: accepted.turn_id,
          status: 'failed',
          error: { code: 'interrupted', message: ERROR_MESSAGES.interrupted },
          assistant_text: '',
          activity_dropped: 0,
        };
        t.match(terminal.payload, told, 'not the completed answer nothing recorded');
        const lookup = await who.client.call(
          'operation.lookup',
          { operation_id: operation },
          { session: who.session, control: who.control },
        );
        t.match(lookup, { status: 'completed', result: told }, 'the lookup agrees');
        const claim = await who.client.call('session.claim', {}, { session: who.session, operation: op() });
        t.match(claim.snapshot, { turn: null, terminal: told }, 'so does a claim');
        t.same(
          daemon.app.history.activeTurns().map((row) => row.session_id),
          [who.session],
          'still marked active, for the next start',
        );
        t.equal(daemon.app.turns.recover(), 1, 'what the next start does');
        const records = await replay(who.client, who.session);
        const recorded = records.find((record) => record.kind === 'turn.terminal');
        t.match(recorded?.data, told, 'history holds what the client was told');
      },
    );

    t.test('when only the terminal itself fails, its interrupted ending is recorded at once', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const { who, application } = await applicationSession(daemon, transport);
      provider.reply(['done']);
      failDurableWrite(daemon.app.history, 2);
      resultOf(await startTurn(who, { prompt: 'go', application }));
      const terminal = await who.client.event('turn.terminal');
      t.match(terminal.payload, { status: 'failed', error: { code: 'interrupted' }, assistant_text: '' });
      t.same(daemon.app.history.activeTurns(), [], 'nothing left for the next start');
      const records = await replay(who.client, who.session);
      t.match(
        records.filter((record) => record.kind === 'turn.terminal').map((record) => record.data),
        [{ status: 'failed', error: { code: 'interrupted' }, assistant_text: '' }],
      );
    });
  });
}
