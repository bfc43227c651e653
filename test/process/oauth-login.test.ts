import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { login } from '../../client/login.js';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { op } from '../helpers/daemon.js';
import {
  authorize,
  startOAuthServer,
  startSilentIssuer,
  type TestOAuthServer,
} from '../helpers/oauth-server.js';
import { stream, toolCallStream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { authorizationUrl, untilState } from '../routes/auth.oauth.fixture.js';
import { type MagidProcess, shortTempDir, startDaemon, startStdio } from './spawn-daemon.js';

interface Scene {
  home: string;
  workspace: string;
  magid: MagidProcess;
  provider: ScriptedProvider;
  connect(): Promise<WireClient>;
  credentials(): Record<string, unknown> | null;
}

/** The real daemon over a real socket, signing in at `issuer`, with a scripted model provider. */
async function scene(t: Test, issuer: string, oauth: Record<string, unknown> = {}): Promise<Scene> {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  mkdirSync(home, { mode: 0o700 });
  mkdirSync(workspace);
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({ provider: { oauth: { issuer, client_id: 'magid-process', ...oauth } } }),
  );
  const provider = await ScriptedProvider.start(t);
  const socket = join(root, 'd.sock');
  const { magid } = await startDaemon(t, {
    socket,
    home,
    args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
  });
  const connect = async () => {
    const { client } = await connectSocket(socket);
    t.teardown(() => client.close());
    await client.initialize([]);
    return client;
  };
  const credentials = () => {
    try {
      return JSON.parse(readFileSync(join(home, 'credentials.json'), 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };
  return { home, workspace, magid, provider, connect, credentials };
}

async function session(client: WireClient, workspace: string) {
  const created = await client.call('session.create', { workspace, title: 'oauth' }, { operation: op() });
  const session = created.session_id as string;
  const claim = await client.call('session.claim', {}, { session, operation: op() });
  return { session, control: claim.control_token as string };
}

function turn(client: WireClient, who: { session: string; control: string }, prompt: string) {
  return client.call(
    'turn.start',
    { prompt },
    { session: who.session, control: who.control, operation: op() },
  );
}

/** Everything secret the sign-in involved, as the authorization server saw it. */
function secretsOf(server: TestOAuthServer, url: string, callback: string): string[] {
  const query = new URL(url).searchParams;
  const secrets = [url, callback, query.get('state')!, query.get('code_challenge')!];
  secrets.push(new URL(callback).searchParams.get('code')!);
  for (const request of server.tokenRequests) {
    for (const name of ['code', 'code_verifier', 'refresh_token']) {
      if (request.body[name]) secrets.push(request.body[name]!);
    }
  }
  return secrets;
}

t.test('a full login through the loopback callback, with the client library', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer);
  const client = await s.connect();
  const attempt = await login(client);
  const url = await attempt.authorizationUrl;
  t.match(url, `${server.issuer}/authorize?`);
  const steps: string[] = [];
  const iterated = (async () => {
    for await (const step of attempt) steps.push(step.state);
  })();
  const callback = await authorize(url);
  t.equal((await fetch(callback)).status, 200, 'the browser reached the loopback listener');
  const outcome = await attempt.outcome;
  await iterated;
  t.same(outcome, { login_id: attempt.loginId, state: 'completed', code: null });
  t.same(steps, ['authorization_url', 'waiting', 'exchanging']);
  t.same(await client.call('auth.status'), { ready: true, method: 'oauth' });
  const stored = s.credentials()!.oauth as Record<string, unknown>;
  t.type(stored.access_token, 'string');

  // The stored tokens are the provider's key.
  s.provider.reply(['signed in']);
  const who = await session(client, s.workspace);
  await turn(client, who, 'hello');
  await client.event('turn.terminal');
  t.equal(s.provider.requests[0]!.headers.authorization, `Bearer ${stored.access_token}`);
  t.same(await client.call('auth.logout', {}, { operation: op() }), {
    removed: true,
    ready: false,
    method: null,
  });
  t.equal(s.credentials(), null, 'logout removes the local tokens');
  t.equal(server.tokenRequests.length, 1, 'and sends the server nothing');
});

t.test('a login through auth.login_callback, and a wrong state', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer);
  const client = await s.connect();
  const attempt = await login(client);
  const pasted = await authorize(await attempt.authorizationUrl);
  t.same(await attempt.callback(pasted), { login_id: attempt.loginId, state: 'completed', code: null });
  t.equal((await attempt.outcome).state, 'completed');

  const again = await login(client);
  const forged = new URL(await authorize(await again.authorizationUrl));
  forged.searchParams.set('state', 'not-the-state');
  t.same(await again.callback(forged.href), {
    login_id: again.loginId,
    state: 'failed',
    code: 'state_mismatch',
  });
  t.type((s.credentials()!.oauth as Record<string, unknown>).access_token, 'string', 'the first tokens stay');
});

t.test('a flow that expires', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer, { login_timeout_ms: 1000 });
  const client = await s.connect();
  const attempt = await login(client);
  const url = await attempt.authorizationUrl;
  t.same(await attempt.outcome, { login_id: attempt.loginId, state: 'expired', code: null });
  const port = new URL(new URL(url).searchParams.get('redirect_uri')!).port;
  await t.rejects(fetch(`http://127.0.0.1:${port}/callback`), 'the listener is closed');
});

t.test('cancellation at each step leaves the old credential whole', async (t) => {
  const OLD = { api_key: 'sk-old-credential' };

  t.test('before the URL is shown', async (t) => {
    const silent = await startSilentIssuer(t);
    const s = await scene(t, silent.issuer);
    const client = await s.connect();
    await client.call('auth.login', { method: 'api_key', api_key: OLD.api_key }, { operation: op() });
    const attempt = await login(client);
    await silent.asked;
    t.ok(await attempt.cancel());
    t.equal((await attempt.outcome).state, 'cancelled');
    await t.rejects(attempt.authorizationUrl, 'no URL was ever shown');
    t.same(s.credentials(), OLD);
  });

  t.test('while waiting', async (t) => {
    const server = await startOAuthServer(t);
    const s = await scene(t, server.issuer);
    const client = await s.connect();
    await client.call('auth.login', { method: 'api_key', api_key: OLD.api_key }, { operation: op() });
    const attempt = await login(client);
    await attempt.authorizationUrl;
    t.ok(await attempt.cancel());
    t.equal((await attempt.outcome).state, 'cancelled');
    t.same(s.credentials(), OLD);
  });

  t.test('during the exchange', async (t) => {
    const server = await startOAuthServer(t);
    const s = await scene(t, server.issuer);
    const client = await s.connect();
    const canceller = await s.connect();
    await client.call('auth.login', { method: 'api_key', api_key: OLD.api_key }, { operation: op() });
    let cancelled: Promise<Record<string, unknown>> | null = null;
    server.server.service.prependListener('beforeResponse', () => {
      cancelled ??= canceller.call('auth.cancel', {}, { operation: op() });
    });
    const attempt = await login(client);
    const redirect = await authorize(await attempt.authorizationUrl);
    await fetch(redirect);
    const outcome = await attempt.outcome;
    t.ok(cancelled, 'the cancel was sent while the server answered');
    const { cancelled: taken } = await cancelled!;
    // The cancel raced the token answer: it either stopped the login or came once the tokens were being stored.
    if (taken) {
      t.equal(outcome.state, 'cancelled');
      t.same(s.credentials(), OLD, 'the old credential');
    } else {
      t.equal(outcome.state, 'completed');
      t.type(
        (s.credentials()!.oauth as Record<string, unknown>).access_token,
        'string',
        'the new credential',
      );
    }
    const names = readdirSync(s.home).filter((name) => name.includes('credentials'));
    t.same(names, ['credentials.json'], 'no temporary left');
  });

  t.test('by the connection going away, and by the daemon stopping', async (t) => {
    const server = await startOAuthServer(t);
    const s = await scene(t, server.issuer);
    const client = await s.connect();
    await client.call('auth.login', { method: 'api_key', api_key: OLD.api_key }, { operation: op() });
    resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
    await authorizationUrl(client);
    client.close();
    const other = await s.connect();
    let answer = await other.request('auth.login', { method: 'oauth' }, { operation: op() });
    while (!answer.ok) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      answer = await other.request('auth.login', { method: 'oauth' }, { operation: op() });
    }
    await authorizationUrl(other);
    s.magid.child.kill('SIGTERM');
    const cancelled = await untilState(other, 'cancelled').catch(() => null);
    t.same(await s.magid.waitExit(), { code: 0, signal: null }, 'the daemon stopped cleanly');
    t.ok(cancelled === null || cancelled.at(-1)!.payload.state === 'cancelled');
    t.same(s.credentials(), OLD);
  });
});

function resultOf(frame: { ok: boolean; result?: Record<string, unknown> }): Record<string, unknown> {
  if (!frame.ok) throw new Error('expected success');
  return frame.result!;
}

t.test('a refresh during a running turn', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer);
  const client = await s.connect();
  // Fresh for 8 s: due for a refresh (a quarter of its lifetime before expiry) six seconds after the login.
  server.expiresIn = 8;
  const attempt = await login(client);
  await attempt.callback(await authorize(await attempt.authorizationUrl));
  server.expiresIn = 3600;
  const first = s.credentials()!.oauth as { access_token: string; expires_at: number };

  const hold = s.provider.hold();
  const round = toolCallStream([
    { id: 'p1', name: 'update_plan', arguments: '{"steps":[{"step":"a","status":"pending"}]}' },
  ]);
  s.provider.script(stream([hold, ...round.steps]));
  s.provider.reply(['done']);
  const who = await session(client, s.workspace);
  await turn(client, who, 'plan');
  await hold.reached;
  t.equal(s.provider.requests[0]!.headers.authorization, `Bearer ${first.access_token}`, 'fresh: no refresh');
  // The first round is answered once the token has become due.
  await new Promise((resolve) =>
    setTimeout(resolve, Math.max(0, first.expires_at - 2_000 - Date.now() + 50)),
  );
  hold.release();
  const terminal = await client.event('turn.terminal');
  t.equal((terminal.payload as { status: string }).status, 'completed');
  const refreshed = s.credentials()!.oauth as { access_token: string };
  t.not(refreshed.access_token, first.access_token, 'the refreshed tokens were stored');
  t.equal(s.provider.requests[1]!.headers.authorization, `Bearer ${refreshed.access_token}`);
  t.equal(server.tokenRequests.filter((request) => request.grant_type === 'refresh_token').length, 1);
});

/** Resolves once the stored access token has expired, by the wall clock the daemon reads too. */
function expiry(s: Scene): Promise<void> {
  const { expires_at } = s.credentials()!.oauth as { expires_at: number };
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, expires_at - Date.now() + 50)));
}

async function signIn(client: WireClient, server: TestOAuthServer, expiresIn: number): Promise<void> {
  server.expiresIn = expiresIn;
  const attempt = await login(client);
  await attempt.callback(await authorize(await attempt.authorizationUrl));
  server.expiresIn = 3600;
}

const refreshes = (server: TestOAuthServer) =>
  server.tokenRequests.filter((request) => request.grant_type === 'refresh_token').length;

t.test('two turns that need a refresh at once cause one refresh request', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer);
  const client = await s.connect();
  const other = await s.connect();
  await signIn(client, server, 1);
  const stale = (s.credentials()!.oauth as { access_token: string }).access_token;
  s.provider.reply(['one']).reply(['two']);
  const a = await session(client, s.workspace);
  const b = await session(other, s.workspace);
  await expiry(s);
  await Promise.all([turn(client, a, 'one'), turn(other, b, 'two')]);
  await Promise.all([client.event('turn.terminal'), other.event('turn.terminal')]);
  const fresh = (s.credentials()!.oauth as { access_token: string }).access_token;
  t.not(fresh, stale);
  t.same(
    s.provider.requests.map((request) => request.headers.authorization),
    [`Bearer ${fresh}`, `Bearer ${fresh}`],
  );
  t.equal(refreshes(server), 1);
  t.same(await client.call('status').then((status) => status.auth), { ready: true, method: 'oauth' });
});

t.test('30 s tokens are not refreshed before every request', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer);
  const client = await s.connect();
  await signIn(client, server, 30);
  const who = await session(client, s.workspace);
  for (const prompt of ['one', 'two', 'three', 'four']) {
    s.provider.reply([prompt]);
    await turn(client, who, prompt);
    t.match((await client.event('turn.terminal')).payload, { status: 'completed' });
  }
  const token = (s.credentials()!.oauth as { access_token: string }).access_token;
  t.same(
    s.provider.requests.map((request) => request.headers.authorization),
    Array(4).fill(`Bearer ${token}`),
  );
  t.equal(refreshes(server), 0, 'four turns within its first 22.5 s: no refresh');
});

t.test('a refusing token endpoint: turns end auth_expired, one refresh attempt, one log line', async (t) => {
  const server = await startOAuthServer(t);
  const s = await scene(t, server.issuer);
  const client = await s.connect();
  await signIn(client, server, 1);
  const who = await session(client, s.workspace);
  server.failTokens = 400;
  await expiry(s);
  const ends = [];
  for (const prompt of ['one', 'two', 'three', 'four']) {
    await turn(client, who, prompt);
    ends.push((await client.event('turn.terminal')).payload);
  }
  t.match(ends, Array(4).fill({ status: 'failed', error: { code: 'auth_expired' } }));
  t.equal(s.provider.requests.length, 0, 'the expired token was never sent');
  t.equal(refreshes(server), 1, 'one refresh for four turns, the rest within its backoff');
  // Status reports not ready with a fixed reason, from memory only.
  const requests = server.tokenRequests.length;
  t.same(await client.call('auth.status'), { ready: false, method: 'oauth', reason: 'refresh_failed' });
  t.same(await client.call('status').then((status) => status.auth), {
    ready: false,
    method: 'oauth',
    reason: 'refresh_failed',
  });
  t.equal(server.tokenRequests.length, requests, 'status never touched the network');
  const lines = s.magid.stderr
    .split('\n')
    .filter((line) => line.includes('the OAuth token refresh failed'))
    .map((line) => JSON.parse(line));
  t.match(lines, [{ level: 40, refresh: { code: 'refresh_failed', failures: 1, retry_in_ms: Number } }]);
  const stored = s.credentials()!.oauth as Record<string, string>;
  for (const secret of [stored.access_token!, stored.refresh_token!, 'server-secret-description'])
    t.notOk(s.magid.stderr.includes(secret), 'nothing secret in the log');
});

t.test(
  'no authorization URL, code, verifier, callback or token in any log, record, outcome or error',
  async (t) => {
    const server = await startOAuthServer(t);
    const s = await scene(t, server.issuer);
    const client = await s.connect();
    const watcher = await s.connect();
    const operation = op();
    const started = await client.request('auth.login', { method: 'oauth' }, { operation });
    const url = await authorizationUrl(client);
    const callback = await authorize(url);
    const refusals = [
      await watcher.request(
        'auth.login_callback',
        { url: `${callback}&${'x'.repeat(9000)}` },
        { operation: op() },
      ),
      await watcher.request('auth.login', { method: 'oauth', url: callback }, { operation: op() }),
    ];
    const pastedOperation = op();
    const pasted = await watcher.request(
      'auth.login_callback',
      { url: callback },
      { operation: pastedOperation },
    );
    t.equal((pasted.result as { state: string }).state, 'completed');
    server.expiresIn = 30;
    const second = await login(client);
    const secondUrl = await second.authorizationUrl;
    const secondCallback = await authorize(secondUrl);
    const forged = new URL(secondCallback);
    forged.searchParams.set('state', 'forged-state-value');
    t.equal((await second.callback(forged.href)).code, 'state_mismatch');
    const third = await login(client);
    const thirdUrl = await third.authorizationUrl;
    const thirdCallback = await authorize(thirdUrl);
    await fetch(thirdCallback);
    await third.outcome;
    s.provider.reply(['ok']);
    const who = await session(client, s.workspace);
    await turn(client, who, 'use the token');
    await client.event('turn.terminal');
    t.ok(started.ok);
    const lookups = await Promise.all(
      [operation, pastedOperation].map((id) => watcher.call('operation.lookup', { operation_id: id })),
    );
    const tokens = JSON.stringify(s.credentials());
    const stored = s.credentials()!.oauth as Record<string, string>;
    s.magid.child.kill('SIGTERM');
    await s.magid.waitExit();

    const secrets = [
      ...secretsOf(server, url, callback),
      ...secretsOf(server, secondUrl, secondCallback),
      ...secretsOf(server, thirdUrl, thirdCallback),
      stored.access_token!,
      stored.refresh_token!,
      'forged-state-value',
    ];
    const history = readdirSync(join(s.home, 'state'))
      .map((name) => readFileSync(join(s.home, 'state', name)).toString('latin1'))
      .join('\n');
    const places: Record<string, string> = {
      'the daemon log': s.magid.stderr + s.magid.stdout,
      'the history': history,
      'retained outcomes': JSON.stringify(lookups),
      'refusals and answers': JSON.stringify([...refusals, pasted]),
      "another connection's frames": watcher.received.join('\n'),
      'every file of the home but credentials.json': readdirSync(s.home)
        .filter((name) => name !== 'credentials.json' && name !== 'state')
        .map((name) => {
          try {
            return readFileSync(join(s.home, name), 'utf8');
          } catch {
            return '';
          }
        })
        .join('\n'),
    };
    t.ok(s.magid.stderr.includes('OAuth login ended'), 'the log says the login ended');
    for (const [place, text] of Object.entries(places)) {
      const leaked = secrets.filter((secret) => secret.length >= 8 && text.includes(secret));
      t.same(leaked.length, 0, `nothing secret in ${place}`);
    }
    t.ok(tokens.includes(stored.access_token!), 'the tokens are in credentials.json only');
    // The one authorization-URL event went to the requesting connection, and only the URL is there.
    t.ok(client.received.join('\n').includes(JSON.stringify(url).slice(1, -1)));
  },
);

t.test('the end of stdio input cancels the login', async (t) => {
  const server = await startOAuthServer(t);
  const home = join(shortTempDir(t), 'home');
  mkdirSync(home, { mode: 0o700 });
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({ provider: { oauth: { issuer: server.issuer, client_id: 'magid-process' } } }),
  );
  const { magid, client } = await startStdio(t, { home });
  await client.initialize([]);
  resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
  const url = await authorizationUrl(client);
  client.close();
  const events = await untilState(client, 'cancelled');
  t.equal(events.at(-1)!.payload.state, 'cancelled');
  t.same(await magid.waitExit(), { code: 0, signal: null });
  const port = new URL(new URL(url).searchParams.get('redirect_uri')!).port;
  await t.rejects(fetch(`http://127.0.0.1:${port}/callback`), 'the listener is closed');
  t.equal(server.tokenRequests.length, 0);
});
