import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { authorize, startOAuthServer } from '../helpers/oauth-server.js';
import { authorizationUrl, PROGRESS, startOAuthDaemon, untilState } from './auth.oauth.fixture.js';
import { codeOf, resultOf } from './session.resources.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`auth.login {method:"oauth"} (${transport})`, async (t) => {
    t.test(
      'accepted at once; URL, waiting, exchanging and completed follow; tokens stored 0600',
      async (t) => {
        const server = await startOAuthServer(t);
        const daemon = await startOAuthDaemon(t, server, { scopes: ['openid', 'offline_access'] });
        const client = await daemon.connect(transport);
        const operation = op();
        const started = resultOf<{ login_id: string; state: string }>(
          await client.request('auth.login', { method: 'oauth' }, { operation }),
        );
        t.equal(started.state, 'started');
        t.match(started.login_id, /^login_/);
        const lookup = await client.call('operation.lookup', { operation_id: operation });
        t.match(lookup, { status: 'accepted', result: { login_id: started.login_id, state: 'started' } });

        const [shown, waiting] = await untilState(client, 'waiting');
        t.equal(shown!.operation_id, operation, 'events carry the login operation');
        t.equal(shown!.payload.login_id, started.login_id);
        const url = new URL(shown!.payload.authorization_url as string);
        t.equal(url.searchParams.get('code_challenge_method'), 'S256');
        t.equal(url.searchParams.get('scope'), 'openid offline_access');
        t.equal(shown!.payload.expires_in_ms, 300_000);
        t.equal(waiting!.payload.state, 'waiting');
        t.same(await client.call('auth.status'), { ready: false, method: null }, 'nothing yet');

        await fetch(await authorize(url.href));
        const rest = await untilState(client, 'completed');
        t.same(
          rest.map((event) => event.payload.state),
          ['exchanging', 'completed'],
        );
        t.same(await client.call('auth.status'), { ready: true, method: 'oauth' });
        const file = join(daemon.home, 'credentials.json');
        t.equal(statSync(file).mode & 0o777, 0o600);
        const stored = JSON.parse(readFileSync(file, 'utf8'));
        t.type(stored.oauth.access_token, 'string');
        t.type(stored.oauth.refresh_token, 'string');
        t.equal(stored.oauth.expires_at, daemon.clock.wallNow() + 3_600_000, 'expiry on the injected clock');
        const settled = await client.call('operation.lookup', { operation_id: operation });
        t.match(settled, {
          status: 'completed',
          result: { login_id: started.login_id, state: 'completed', code: null },
        });
        t.notMatch(JSON.stringify(settled), url.searchParams.get('state')!, 'no state retained');
      },
    );

    t.test('one login at a time, whichever kind: a second is configuration_busy', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      resultOf(await first.request('auth.login', { method: 'oauth' }, { operation: op() }));
      await authorizationUrl(first);
      for (const payload of [{ method: 'oauth' }, { method: 'api_key', api_key: 'sk-x' }]) {
        const refused = await second.request('auth.login', payload, { operation: op() });
        t.equal(codeOf(refused), 'configuration_busy');
      }
      t.same(await first.call('auth.cancel', {}, { operation: op() }), { cancelled: true });
      await untilState(first, 'cancelled');
      const again = await second.request(
        'auth.login',
        { method: 'api_key', api_key: 'sk-x' },
        { operation: op() },
      );
      t.same(resultOf(again), { ready: true, method: 'stored' }, 'free again once it ended');
    });

    t.test('other configuration methods are not held while the login waits', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
      await authorizationUrl(client);
      t.same(await client.call('catalog.list'), { models: [], truncated: false, refreshed_at: null });
    });

    t.test('the flow expires after its timeout on the daemon clock', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server, { login_timeout_ms: 60_000 });
      const client = await daemon.connect(transport);
      const operation = op();
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation }));
      const url = await authorizationUrl(client);
      daemon.clock.advance(60_000);
      await untilState(client, 'expired');
      const late = await client.request(
        'auth.login_callback',
        { url: await authorize(url) },
        { operation: op() },
      );
      t.equal(codeOf(late), 'conflict', 'no login waits any more');
      t.match(await client.call('operation.lookup', { operation_id: operation }), {
        result: { state: 'expired', code: null },
      });
    });

    t.test('the requesting connection going away cancels the login', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
      await authorizationUrl(client);
      client.close();
      // Once the login has ended, another may start.
      for (let attempt = 0; ; attempt++) {
        const answer = await other.request('auth.login', { method: 'oauth' }, { operation: op() });
        if (answer.ok) break;
        t.equal(codeOf(answer), 'configuration_busy');
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (attempt > 200) throw new Error('the login never ended');
      }
      t.pass('the first login ended with its connection');
    });

    t.test('without provider.oauth the method is a conflict; a bad payload is invalid_payload', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(
        codeOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() })),
        'conflict',
      );
      for (const payload of [{ method: 'oauth', client_id: 'x' }, { method: 'oauth2' }]) {
        t.equal(codeOf(await client.request('auth.login', payload, { operation: op() })), 'invalid_payload');
      }
      t.equal(client.pendingEvents.filter((event) => event.event === PROGRESS).length, 0);
    });
  });
}
