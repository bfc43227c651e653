import t from 'tap';
import { LoginConnectionLost, login } from '../../client/login.js';
import { WireCallError } from '../../client/wire-client.js';
import { startDaemon } from '../helpers/daemon.js';
import { authorize, startOAuthServer } from '../helpers/oauth-server.js';
import { startOAuthDaemon } from '../routes/auth.oauth.fixture.js';

t.test('login() yields the URL and its steps, and resolves with the outcome', async (t) => {
  const server = await startOAuthServer(t);
  const daemon = await startOAuthDaemon(t, server);
  const client = await daemon.connect('socket');
  const attempt = await login(client);
  t.match(attempt.loginId, /^login_/);
  const url = await attempt.authorizationUrl;
  const steps: string[] = [];
  const iterated = (async () => {
    for await (const step of attempt) steps.push(step.state);
  })();
  await fetch(await authorize(url));
  t.same(await attempt.outcome, { login_id: attempt.loginId, state: 'completed', code: null });
  await iterated;
  t.same(steps, ['authorization_url', 'waiting', 'exchanging']);
  t.equal(client.pendingEvents.length, 0, 'the login took its events');
});

t.test(
  'a refused login throws; a cancelled one resolves cancelled and shows no URL it never had',
  async (t) => {
    const server = await startOAuthServer(t);
    const daemon = await startOAuthDaemon(t, server);
    const client = await daemon.connect('in-process');
    const first = await login(client);
    await first.authorizationUrl;
    const refused = await login(client).catch((error: unknown) => error);
    t.ok(refused instanceof WireCallError);
    t.equal((refused as WireCallError).code, 'configuration_busy');
    t.equal(await first.cancel(), true);
    t.same((await first.outcome).state, 'cancelled');
    t.equal(await first.cancel(), false, 'nothing left to cancel');

    const bare = await startDaemon(t);
    const other = await bare.connect('in-process');
    const unconfigured = await login(other).catch((error: unknown) => error);
    t.equal((unconfigured as WireCallError).code, 'conflict');
  },
);

t.test('the connection closing rejects the login with LoginConnectionLost', async (t) => {
  const server = await startOAuthServer(t);
  const daemon = await startOAuthDaemon(t, server);
  const client = await daemon.connect('in-process');
  const attempt = await login(client);
  await attempt.authorizationUrl;
  client.close();
  await t.rejects(attempt.outcome, LoginConnectionLost);
});
