import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { authorize, startOAuthServer, startSilentIssuer } from '../helpers/oauth-server.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { authorizationUrl, startOAuthDaemon, untilState } from './auth.oauth.fixture.js';
import { codeOf, resultOf } from './session.resources.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`auth.cancel (${transport})`, async (t) => {
    t.test('nothing to cancel', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      t.same(await client.call('auth.cancel', {}, { operation: op() }), { cancelled: false });
    });

    t.test('before the URL is shown: the login ends cancelled with no URL sent', async (t) => {
      const silent = await startSilentIssuer(t);
      const daemon = await startDaemon(t, {
        config: { provider: { oauth: { issuer: silent.issuer, client_id: 'magid-test' } } },
      });
      const client = await daemon.connect(transport);
      const operation = op();
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation }));
      await silent.asked;
      t.same(await client.call('auth.cancel', {}, { operation: op() }), { cancelled: true });
      const events = await untilState(client, 'cancelled');
      t.same(
        events.map((event) => event.payload.state),
        ['cancelled'],
      );
      t.match(await client.call('operation.lookup', { operation_id: operation }), {
        status: 'completed',
        result: { state: 'cancelled', code: null },
      });
    });

    t.test('while the login waits for the configuration worker', async (t) => {
      const server = await startOAuthServer(t);
      const provider = await ScriptedProvider.start(t);
      const daemon = await startOAuthDaemon(
        t,
        server,
        {},
        {
          provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
        },
      );
      const client = await daemon.connect(transport);
      const hold = provider.hold();
      provider.scriptModels({
        status: 200,
        headers: { 'content-type': 'application/json' },
        steps: [hold, { kind: 'write', bytes: Buffer.from('{"data":[]}') }],
      });
      const refresh = client.request('catalog.refresh', {}, { operation: op() });
      await hold.reached;
      const login = client.request('auth.login', { method: 'oauth' }, { operation: op() });
      // The login is admitted: a second one is busy, and a cancel is taken before it starts.
      t.equal(
        codeOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() })),
        'configuration_busy',
      );
      t.same(await client.call('auth.cancel', {}, { operation: op() }), { cancelled: true });
      hold.release();
      resultOf(await refresh);
      resultOf(await login);
      const events = await untilState(client, 'cancelled');
      t.same(
        events.map((event) => event.payload.state),
        ['cancelled'],
      );
      t.equal(server.tokenRequests.length, 0);
    });

    t.test('while waiting, from another connection; the old credential stays', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      await client.call('auth.login', { method: 'api_key', api_key: 'sk-old' }, { operation: op() });
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
      const url = await authorizationUrl(client);
      t.same(await other.call('auth.cancel', {}, { operation: op() }), { cancelled: true });
      await untilState(client, 'cancelled');
      const port = new URL(new URL(url).searchParams.get('redirect_uri')!).port;
      await t.rejects(fetch(`http://127.0.0.1:${port}/callback`), 'the listener is closed');
      t.same(JSON.parse(readFileSync(join(daemon.home, 'credentials.json'), 'utf8')), { api_key: 'sk-old' });
      t.same(await client.call('auth.status'), { ready: true, method: 'stored' });
    });

    t.test('during the exchange: the old credential stays, whole', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      await client.call('auth.login', { method: 'api_key', api_key: 'sk-old' }, { operation: op() });
      let asked: () => void = () => {};
      const tokenAsked = new Promise<void>((resolve) => (asked = resolve));
      let cancelled: Promise<Record<string, unknown>> | null = null;
      // Sent while the server builds its token answer, which cannot have reached the daemon yet.
      server.server.service.prependListener('beforeResponse', () => {
        cancelled = client.call('auth.cancel', {}, { operation: op() });
        asked();
      });
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
      const redirect = await authorize(await authorizationUrl(client));
      const callback = client.request('auth.login_callback', { url: redirect }, { operation: op() });
      await tokenAsked;
      t.same(await cancelled!, { cancelled: true });
      t.match(resultOf(await callback), { state: 'cancelled', auth: { method: 'stored' } });
      t.same(JSON.parse(readFileSync(join(daemon.home, 'credentials.json'), 'utf8')), { api_key: 'sk-old' });
    });
  });
}
