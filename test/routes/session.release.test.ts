import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`session.release (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('release ends control and the token stops working', async (t) => {
      const client = await daemon.connect(transport);
      const { session, control } = await claimedSession(client, daemon.workspace);
      t.same(await client.call('session.release', {}, { session, control, operation: op() }), {
        released: true,
      });
      t.equal(daemon.app.sessions.isClaimed(session), false);
      const again = await client.request('session.release', {}, { session, control, operation: op() });
      t.equal(again.error?.code, 'unauthorized');
      const close = await client.request('session.close', {}, { session, control, operation: op() });
      t.equal(close.error?.code, 'unauthorized');
    });

    t.test('a missing or wrong token is unauthorized', async (t) => {
      const client = await daemon.connect(transport);
      const { session } = await claimedSession(client, daemon.workspace);
      const missing = await client.request('session.release', {}, { session, operation: op() });
      t.equal(
        missing.error?.code,
        'invalid_request',
        'a null token where one is required is an envelope error',
      );
      const wrong = await client.request(
        'session.release',
        {},
        { session, control: 'not-the-token', operation: op() },
      );
      t.equal(wrong.error?.code, 'unauthorized');
    });
  });
}
