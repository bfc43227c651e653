import pino from 'pino';
import t, { type Test } from 'tap';
import type { WireClient } from '../../client/wire-client.js';
import { REFRESH_BACKOFF } from '../../core/auth/token-refresher.js';
import { op } from '../helpers/daemon.js';
import { authorize, startOAuthServer, type TestOAuthServer } from '../helpers/oauth-server.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { startOAuthDaemon, untilState } from './auth.oauth.fixture.js';
import { codeOf } from './session.resources.fixture.js';

const REFRESH_FAILED = 'the OAuth token refresh failed';

/** A daemon signing in at a real OAuth server, with a scripted provider, its log kept as parsed lines. */
async function scene(t: Test) {
  const server = await startOAuthServer(t);
  const provider = await ScriptedProvider.start(t);
  const logs: Array<Record<string, unknown>> = [];
  const daemon = await startOAuthDaemon(
    t,
    server,
    {},
    {
      provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
    },
  );
  const client = await daemon.connect('socket');
  const created = await client.call(
    'session.create',
    { workspace: daemon.workspace, title: 't' },
    { operation: op() },
  );
  const session = created.session_id as string;
  const claim = await client.call('session.claim', {}, { session, operation: op() });
  const who = { session, control: claim.control_token as string };
  const refreshes = () =>
    server.tokenRequests.filter((request) => request.grant_type === 'refresh_token').length;
  /** A turn's terminal: its status and error code. */
  const turn = async () => {
    await client.call('turn.start', { prompt: 'hello' }, { ...who, operation: op() });
    const terminal = (await client.event('turn.terminal')).payload as {
      status: string;
      error: { code: string } | null;
    };
    return `${terminal.status}:${terminal.error?.code ?? '-'}`;
  };
  return { server, provider, logs, daemon, client, turn, refreshes };
}

/** Signs in, the server issuing access tokens that live `expiresIn` seconds. */
async function signIn(client: WireClient, server: TestOAuthServer, expiresIn: number): Promise<void> {
  server.expiresIn = expiresIn;
  await client.call('auth.login', { method: 'oauth' }, { operation: op() });
  const [shown] = await untilState(client, 'authorization_url');
  await fetch(await authorize(shown!.payload.authorization_url as string));
  await untilState(client, 'completed');
}

t.test('a refusing token endpoint: expired tokens are never sent, and refreshes back off', async (t) => {
  const s = await scene(t);
  await signIn(s.client, s.server, 30);
  s.server.failTokens = 400;
  s.daemon.clock.advance(30_000);
  t.same(await s.client.call('auth.status'), { ready: true, method: 'oauth' }, 'expired, not yet refused');

  const ends = [await s.turn(), await s.turn(), await s.turn(), await s.turn()];
  t.same(ends, Array(4).fill('failed:auth_expired'), 'each turn ends auth_expired');
  t.equal(s.provider.requests.length, 0, 'no request carried the expired token');
  t.equal(s.refreshes(), 1, 'one refresh for four turns: the others wait for its backoff');
  t.same(await s.client.call('auth.status'), { ready: false, method: 'oauth', reason: 'refresh_failed' });
  t.equal(codeOf(await s.client.request('catalog.refresh', {}, { operation: op() })), 'auth_expired');
  t.equal(s.refreshes(), 1);
  const failures = s.logs.filter((line) => line.msg === REFRESH_FAILED);
  t.equal(failures.length, 1, 'one log line per failed refresh');
  t.match(failures[0], { level: 40, refresh: { code: 'refresh_failed', failures: 1 } });
  const wait = (failures[0]!.refresh as { retry_in_ms: number }).retry_in_ms;
  t.ok(wait > REFRESH_BACKOFF.base_ms / 2 && wait <= REFRESH_BACKOFF.base_ms, `waits ${wait} ms, jittered`);

  // Past the backoff, one more attempt, refused too: its wait doubles.
  s.daemon.clock.advance(REFRESH_BACKOFF.base_ms);
  t.same([await s.turn(), await s.turn()], ['failed:auth_expired', 'failed:auth_expired']);
  t.equal(s.refreshes(), 2);
  t.match(s.logs.filter((line) => line.msg === REFRESH_FAILED)[1], { refresh: { failures: 2 } });

  // Once the server answers again, the next attempt after the backoff renews the token and turns run.
  s.server.failTokens = null;
  s.daemon.clock.advance(2 * REFRESH_BACKOFF.base_ms);
  s.provider.reply(['back']);
  t.equal(await s.turn(), 'completed:-');
  t.equal(s.refreshes(), 3);
  t.same(await s.client.call('auth.status'), { ready: true, method: 'oauth' });
  const stored = s.server.tokenRequests.flatMap((request) => Object.values(request.body));
  const log = JSON.stringify(s.logs);
  t.same(
    stored.filter((value) => value.length >= 16 && log.includes(value)),
    [],
    'no token or grant the server saw is in the log',
  );
  t.notMatch(log, 'server-secret-description', "nor the server's own words");
});

t.test('30 s tokens are refreshed once due, not before every request', async (t) => {
  const s = await scene(t);
  await signIn(s.client, s.server, 30);
  for (let i = 0; i < 4; i++) s.provider.reply(['ok']);
  const ends = [await s.turn(), await s.turn(), await s.turn(), await s.turn()];
  t.same(ends, Array(4).fill('completed:-'));
  t.equal(s.refreshes(), 0, 'four turns, no refresh: the token is fresh for 22.5 s');
  const first = s.provider.requests[0]!.headers.authorization;
  t.same(
    s.provider.requests.map((request) => request.headers.authorization),
    Array(4).fill(first),
  );
  s.daemon.clock.advance(22_500);
  for (let i = 0; i < 4; i++) s.provider.reply(['ok']);
  t.same([await s.turn(), await s.turn(), await s.turn(), await s.turn()], Array(4).fill('completed:-'));
  t.equal(s.refreshes(), 1, 'then one refresh, and its token serves the next turns');
  const renewed = new Set(s.provider.requests.slice(4).map((request) => request.headers.authorization));
  t.equal(renewed.size, 1);
  t.not([...renewed][0], first);
});
