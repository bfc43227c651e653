import t from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { WireError } from '../../core/errors.js';
import type { HistoryStore } from '../../core/history/history-store.js';
import type { DurableResult, DurableWrite } from '../../core/history/history-writes.js';
import { TRANSPORTS } from '../helpers/daemon.js';
import { codeOf, resultOf } from './session.resources.fixture.js';
import { applicationSession, eventCount, startTurn, submitResult, turnDaemon } from './turn.fixture.js';

/**
 * A turn's durable writes are, in order: the user record, the call's binding, its result, the terminal.
 * Each test makes one of them fail as a full disk would, and shows that what depends on it never happened.
 */
function failDurableWrite(history: HistoryStore, ordinal: number): void {
  const { writer } = history;
  const write = writer.write.bind(writer);
  let count = 0;
  writer.write = <W extends DurableWrite>(durable: W): Promise<DurableResult<W>> => {
    count += 1;
    return count === ordinal ? Promise.reject(new WireError('internal_error', 'disk full')) : write(durable);
  };
}

const replayKinds = async (client: WireClient, session: string) =>
  (
    (await client.call('session.replay', { cursor: null, limit: 100 }, { session })).records as Array<{
      kind: string;
    }>
  ).map((record) => record.kind);

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
      'a terminal that could not be recorded leaves the turn marked active, for the next start to recover',
      async (t) => {
        const { daemon, provider } = await turnDaemon(t);
        const { who, application } = await applicationSession(daemon, transport);
        provider.reply(['done']);
        failDurableWrite(daemon.app.history, 2);
        resultOf(await startTurn(who, { prompt: 'go', application }));
        const terminal = await who.client.event('turn.terminal');
        t.equal(terminal.payload.status, 'completed', 'the client still learns how its turn ended');
        t.same(
          daemon.app.history.activeTurns().map((row) => row.session_id),
          [who.session],
          'still marked active',
        );
      },
    );
  });
}
