import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { chunk, done, sse, stream } from '../helpers/provider-streams.js';
import { controller, resultOf } from './session.resources.fixture.js';
import { startTurn, turnDaemon } from './turn.fixture.js';

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

t.test('the claims of a session share one retained encoding of its unchanged snapshot', async (t) => {
  const { daemon, provider } = await turnDaemon(t);
  const who = await controller(daemon, 'socket');
  const long = 'é'.repeat(9_000);
  provider.reply([long]);
  resultOf(await startTurn(who, { prompt: 'first' }));
  await who.client.event('turn.terminal');
  const tableBytes = async () =>
    ((await who.client.call('status')) as { retention: { operations: { bytes: number } } }).retention
      .operations.bytes;
  const claimer = await daemon.connect('socket');
  const claims: Array<{ operation: string; result: Record<string, unknown> }> = [];
  const growth: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = await tableBytes();
    const operation = op();
    claims.push({
      operation,
      result: await claimer.call('session.claim', {}, { session: who.session, operation }),
    });
    growth.push((await tableBytes()) - before);
  }
  t.match(claims[0]!.result.snapshot, { turn: null, terminal: { assistant_text: long } });
  t.ok(growth[0]! > 18_000, 'the first claim retains the snapshot');
  t.ok(
    growth.slice(1).every((bytes) => bytes < 1_000),
    `the next ones only what they hold on their own (${growth.join(', ')} bytes)`,
  );
  const control = claims.at(-1)!.result.control_token as string;
  for (const { operation, result } of claims) {
    const { control_token: _token, ...retained } = result;
    t.same(
      await claimer.call('operation.lookup', { operation_id: operation }, { session: who.session, control }),
      {
        operation_id: operation,
        method: 'session.claim',
        status: 'completed',
        result: retained,
        error: null,
      },
      'each is looked up as it was answered, without its token',
    );
  }

  // While a turn runs, a claim's snapshot is the text so far: one that came later does not change it.
  const hold = provider.hold();
  provider.script(stream([sse(chunk({ content: 'early' })), hold, sse(chunk({ content: ' late' })), done()]));
  const taken = { ...who, client: claimer, control };
  resultOf(await startTurn(taken, { prompt: 'second' }));
  await hold.reached;
  await claimer.event('turn.assistant_delta');
  const during = op();
  const answered = await claimer.call('session.claim', {}, { session: who.session, operation: during });
  t.match(answered.snapshot, { turn: { assistant_text: 'early' } });
  hold.release();
  await claimer.event('turn.terminal');
  const lookup = await claimer.call(
    'operation.lookup',
    { operation_id: during },
    { session: who.session, control: answered.control_token as string },
  );
  t.match(lookup.result, { snapshot: { turn: { assistant_text: 'early' }, terminal: null } });
});
