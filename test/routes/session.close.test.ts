import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`session.close (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('closing an idle session answers closed, idempotently for the same token', async (t) => {
      const client = await daemon.connect(transport);
      const { session, control } = await claimedSession(client, daemon.workspace);
      t.same(await client.call('session.close', {}, { session, control, operation: op() }), {
        status: 'closed',
      });
      t.equal(daemon.app.sessions.isClaimed(session), false);
      t.same(await client.call('session.close', {}, { session, control, operation: op() }), {
        status: 'closed',
      });
      const other = await client.request('session.release', {}, { session, control, operation: op() });
      t.equal(other.error?.code, 'unauthorized', 'the closing token does nothing else');
    });

    t.test('close keeps history: the session stays listed and can be claimed again', async (t) => {
      const client = await daemon.connect(transport);
      const { session, control, generation } = await claimedSession(client, daemon.workspace);
      await client.call('session.close', {}, { session, control, operation: op() });
      const listed = await client.call('session.list', { cursor: null, limit: 100 });
      t.ok((listed.sessions as Array<{ session_id: string }>).some((s) => s.session_id === session));
      const replay = await client.call('session.replay', { cursor: null, limit: 100 }, { session });
      t.same(
        (replay.records as Array<{ kind: string }>).map((r) => r.kind),
        ['session.created', 'session.closed'],
      );
      const claim = await client.call('session.claim', {}, { session, operation: op() });
      t.equal(claim.grant_generation, generation + 1);
      const stale = await client.request('session.close', {}, { session, control, operation: op() });
      t.equal(stale.error?.code, 'unauthorized', 'after a new claim the closing token is superseded');
    });

    t.test('another connection cannot repeat the close with the token', async (t) => {
      const client = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const { session, control } = await claimedSession(client, daemon.workspace);
      await client.call('session.close', {}, { session, control, operation: op() });
      const refused = await other.request('session.close', {}, { session, control, operation: op() });
      t.equal(refused.error?.code, 'unauthorized');
    });
  });
}
