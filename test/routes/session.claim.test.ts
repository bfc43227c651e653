import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`session.claim (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('a claim issues a fresh unpredictable token and the next grant generation', async (t) => {
      const client = await daemon.connect(transport);
      const { session, control, generation } = await claimedSession(client, daemon.workspace);
      t.equal(generation, 1);
      t.match(control, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
      const again = await client.call('session.claim', {}, { session, operation: op() });
      t.equal(again.grant_generation, 2);
      t.not(again.control_token, control);
      t.same(again.snapshot, { turn: null, terminal: null });
      const stale = await client.request('session.release', {}, { session, control, operation: op() });
      t.equal(stale.error?.code, 'unauthorized', 'a reclaim supersedes the old token');
      t.equal(client.pendingEvents.length, 0, 'a reclaim on the same connection is no takeover');
    });

    t.test('takeover revokes the old token at once and tells the old controller', async (t) => {
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const { session, control, generation } = await claimedSession(first, daemon.workspace);
      const taken = await second.call('session.claim', {}, { session, operation: op() });
      t.equal(taken.grant_generation, generation + 1);
      const revoked = await first.event('session.control_revoked');
      t.equal(revoked.session_id, session);
      t.equal(revoked.grant_generation, generation);
      t.equal(revoked.operation_id, null);
      t.equal(revoked.sequence, null);
      t.same(revoked.payload, { session_id: session, grant_generation: generation, reason: 'takeover' });
      t.notMatch(
        JSON.stringify(revoked),
        taken.control_token as string,
        'the new token is not sent to the old controller',
      );
      const refused = await first.request('session.release', {}, { session, control, operation: op() });
      t.equal(refused.error?.code, 'unauthorized');
      const released = await second.call(
        'session.release',
        {},
        { session, control: taken.control_token as string, operation: op() },
      );
      t.same(released, { released: true });
    });

    t.test('a token works only on the connection that claimed it', async (t) => {
      const owner = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const { session, control } = await claimedSession(owner, daemon.workspace);
      const refused = await other.request('session.release', {}, { session, control, operation: op() });
      t.equal(refused.error?.code, 'unauthorized');
      t.same(await owner.call('session.release', {}, { session, control, operation: op() }), {
        released: true,
      });
    });

    t.test('an unknown session is unknown_session', async (t) => {
      const client = await daemon.connect(transport);
      const refused = await client.request('session.claim', {}, { session: 'ses_nope', operation: op() });
      t.equal(refused.error?.code, 'unknown_session');
      const release = await client.request(
        'session.release',
        {},
        { session: 'ses_nope', control: 'x', operation: op() },
      );
      t.equal(release.error?.code, 'unknown_session');
    });

    t.test('a disconnect ends control and a later claim continues the generations', async (t) => {
      const first = await daemon.connect(transport);
      const { session, generation } = await claimedSession(first, daemon.workspace);
      first.close();
      const deadline = Date.now() + 2000;
      while (daemon.app.sessions.isClaimed(session) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      t.equal(daemon.app.sessions.isClaimed(session), false);
      const second = await daemon.connect(transport);
      const claim = await second.call('session.claim', {}, { session, operation: op() });
      t.equal(claim.grant_generation, generation + 1);
      t.equal(second.pendingEvents.length, 0);
    });

    t.test('the payload is strict', async (t) => {
      const client = await daemon.connect(transport);
      const { session } = await claimedSession(client, daemon.workspace);
      const refused = await client.request('session.claim', { force: true }, { session, operation: op() });
      t.equal(refused.error?.code, 'invalid_payload');
    });
  });
}
