import t from 'tap';
import { LoginFlow } from '../../../core/auth/login-flow.js';
import type { LoginProgressEvent } from '../../../core/auth/login-progress.js';
import { LoopbackCallback } from '../../../core/auth/loopback-callback.js';
import { OAuthClient, type TokenSet } from '../../../core/auth/oauth-client.js';
import { readOAuthConfig } from '../../../core/auth/oauth-config.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { authorize, startOAuthServer, type TestOAuthServer } from '../../helpers/oauth-server.js';

interface Harness {
  flow: LoginFlow;
  events: LoginProgressEvent[];
  committed: TokenSet[];
  clock: ReturnType<typeof fakeClock>;
  listeners: LoopbackCallback[];
  /** Resolves with the authorization URL once the flow shows it. */
  url: Promise<string>;
}

function start(
  server: TestOAuthServer,
  options: { commit?: (tokens: TokenSet) => Promise<void>; openListener?: typeof LoopbackCallback.open } = {},
): Harness {
  const clock = fakeClock();
  const client = new OAuthClient(readOAuthConfig({ issuer: server.issuer, client_id: 'magid-test' }), clock);
  const events: LoginProgressEvent[] = [];
  const committed: TokenSet[] = [];
  const listeners: LoopbackCallback[] = [];
  let shown: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => (shown = resolve));
  const flow = new LoginFlow({
    client,
    clock,
    timeoutMs: 300_000,
    openListener: async (onCallback) => {
      const listener = await (options.openListener ?? LoopbackCallback.open)(onCallback);
      listeners.push(listener);
      return listener;
    },
    commit:
      options.commit ??
      (async (tokens) => {
        committed.push(tokens);
      }),
    progress: (event) => {
      events.push(event);
      if (event.state === 'authorization_url') shown(event.authorization_url);
    },
  });
  return { flow, events, committed, clock, listeners, url };
}

async function listenerRefuses(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/callback`).then(
    () => false,
    () => true,
  );
}

t.test('a full login through the loopback listener', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server);
  const redirect = await authorize(await h.url);
  t.match(redirect, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
  const page = await fetch(redirect);
  t.equal(page.status, 200);
  t.notMatch(await page.text(), /code|state/, 'the page shows nothing of the request');
  t.same(await h.flow.finished, { state: 'completed' });
  t.same(
    h.events.map((event) => event.state),
    ['authorization_url', 'waiting', 'exchanging', 'completed'],
  );
  t.equal(h.committed.length, 1);
  t.ok(await listenerRefuses(h.listeners[0]!.port), 'the listener is closed at the end');
});

t.test('a pasted callback completes the login; the listener ignores other paths', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server);
  const redirect = await authorize(await h.url);
  const port = h.listeners[0]!.port;
  t.equal((await fetch(`http://127.0.0.1:${port}/favicon.ico`)).status, 404);
  t.equal(h.flow.step, 'waiting');
  t.ok(h.flow.callback(new URL(redirect)));
  t.notOk(h.flow.callback(new URL(redirect)), 'one callback only');
  t.same(await h.flow.finished, { state: 'completed' });
});

t.test('a wrong state fails the login with state_mismatch and commits nothing', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server);
  const redirect = new URL(await authorize(await h.url));
  redirect.searchParams.set('state', 'forged');
  h.flow.callback(redirect);
  t.same(await h.flow.finished, { state: 'failed', code: 'state_mismatch' });
  t.equal(h.committed.length, 0);
  t.equal(server.tokenRequests.length, 0, 'no code was exchanged');
});

t.test('the flow expires after its timeout and closes its listener', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server);
  const url = await h.url;
  const shown = h.events[0] as { expires_in_ms: number };
  t.equal(shown.expires_in_ms, 300_000);
  h.clock.advance(299_999);
  t.equal(h.flow.step, 'waiting');
  h.clock.advance(1);
  t.same(await h.flow.finished, { state: 'expired' });
  t.ok(await listenerRefuses(h.listeners[0]!.port));
  const redirect = await authorize(url);
  t.notOk(h.flow.callback(new URL(redirect)), 'a late callback is not taken');
});

t.test('cancelled before the URL is shown: no URL, no listener left open', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server);
  t.ok(h.flow.cancel());
  t.same(await h.flow.finished, { state: 'cancelled' });
  t.same(
    h.events.map((event) => event.state),
    ['cancelled'],
  );
});

t.test('cancelled while waiting', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server);
  await h.url;
  t.ok(h.flow.cancel());
  t.notOk(h.flow.cancel(), 'once');
  t.same(await h.flow.finished, { state: 'cancelled' });
  t.ok(await listenerRefuses(h.listeners[0]!.port));
});

t.test('cancelled during the exchange: the token request is abandoned, nothing committed', async (t) => {
  const server = await startOAuthServer(t);
  let tokenAsked: () => void = () => {};
  const asked = new Promise<void>((resolve) => (tokenAsked = resolve));
  // The server has the token request and is building its answer, which cannot have reached the flow yet.
  server.server.service.prependListener('beforeResponse', () => tokenAsked());
  const h = start(server);
  const redirect = await authorize(await h.url);
  h.flow.callback(new URL(redirect));
  await asked;
  t.equal(h.flow.step, 'exchanging');
  t.ok(h.flow.cancel());
  t.same(await h.flow.finished, { state: 'cancelled' });
  t.equal(h.committed.length, 0);
});

t.test(
  'a cancellation during the commit is too late: the commit finishes and the login completes',
  async (t) => {
    const server = await startOAuthServer(t);
    let finishCommit: () => void = () => {};
    let committing: () => void = () => {};
    const begun = new Promise<void>((resolve) => (committing = resolve));
    const h = start(server, {
      commit: () =>
        new Promise<void>((resolve) => {
          committing();
          finishCommit = resolve;
        }),
    });
    const redirect = await authorize(await h.url);
    h.flow.callback(new URL(redirect));
    await begun;
    t.equal(h.flow.step, 'committing');
    t.notOk(h.flow.cancel(), 'refused');
    finishCommit();
    t.same(await h.flow.finished, { state: 'completed' });
  },
);

t.test('a commit that fails is storage_failed', async (t) => {
  const server = await startOAuthServer(t);
  const h = start(server, {
    commit: async () => {
      throw new Error('ENOSPC at /home/someone/.magi');
    },
  });
  h.flow.callback(new URL(await authorize(await h.url)));
  t.same(await h.flow.finished, { state: 'failed', code: 'storage_failed' });
});
