import t from 'tap';
import { claimedSession, op } from '../../helpers/daemon.js';
import { stream } from '../../helpers/provider-streams.js';
import { turnDaemon } from '../../routes/turn.fixture.js';

t.test(
  'cancelAll ends every active turn cancelled and settles once their terminals are recorded',
  async (t) => {
    const { daemon, provider } = await turnDaemon(t);
    const client = await daemon.connect('stdio');
    const turns: Array<{ session: string; turnId: string }> = [];
    for (const prompt of ['first', 'second']) {
      const { session, control } = await claimedSession(client, daemon.workspace);
      const hold = provider.hold();
      provider.script(stream([hold]));
      const accepted = await client.call('turn.start', { prompt }, { session, control, operation: op() });
      await hold.reached;
      turns.push({ session, turnId: accepted.turn_id as string });
    }
    t.equal(daemon.app.turns.activeCount, 2);

    await daemon.app.turns.cancelAll();
    t.equal(daemon.app.turns.activeCount, 0, 'no turn is active once it settles');
    for (const { session, turnId } of turns) {
      const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
      const records = replay.records as Array<{ kind: string; data: Record<string, unknown> }>;
      t.match(
        records.at(-1),
        { kind: 'turn.terminal', data: { turn_id: turnId, status: 'cancelled', error: null } },
        'its terminal is recorded',
      );
    }
    const terminals = [await client.event('turn.terminal'), await client.event('turn.terminal')];
    t.same(
      terminals.map((frame) => frame.payload.status),
      ['cancelled', 'cancelled'],
      'and sent to the controller',
    );
  },
);

t.test('cancelAll with no active turn settles at once', async (t) => {
  const { daemon } = await turnDaemon(t);
  await daemon.app.turns.cancelAll();
  t.equal(daemon.app.turns.activeCount, 0);
  const client = await daemon.connect('stdio');
  t.equal((await client.call('status')).active_turns, 0);
});
