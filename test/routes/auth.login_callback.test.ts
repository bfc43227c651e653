import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, TRANSPORTS } from '../helpers/daemon.js';
import { authorize, startOAuthServer } from '../helpers/oauth-server.js';
import { authorizationUrl, startOAuthDaemon, untilState } from './auth.oauth.fixture.js';
import { codeOf, resultOf } from './session.resources.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`auth.login_callback (${transport})`, async (t) => {
    t.test('a pasted callback completes the login; its answer is the end, never the URL', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      const paster = await daemon.connect(transport);
      const started = resultOf<{ login_id: string }>(
        await client.request('auth.login', { method: 'oauth' }, { operation: op() }),
      );
      const pasted = await authorize(await authorizationUrl(client));
      const operation = op();
      const answer = await paster.request('auth.login_callback', { url: pasted }, { operation });
      t.same(resultOf(answer), {
        login_id: started.login_id,
        state: 'completed',
        code: null,
        auth: { ready: true, method: 'oauth' },
      });
      await untilState(client, 'completed');
      const lookup = await paster.call('operation.lookup', { operation_id: operation });
      const code = new URL(pasted).searchParams.get('code')!;
      t.notMatch(JSON.stringify(lookup), code, 'the code is not retained');
      t.notMatch(paster.received.join('\n'), code, 'nor echoed');
      t.equal(server.tokenRequests.length, 1);
    });

    t.test('a wrong state fails the login with state_mismatch only', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
      const forged = new URL(await authorize(await authorizationUrl(client)));
      forged.searchParams.set('state', 'forged-state-value');
      const answer = await client.request('auth.login_callback', { url: forged.href }, { operation: op() });
      t.match(resultOf(answer), { state: 'failed', code: 'state_mismatch', auth: { ready: false } });
      const failed = (await untilState(client, 'failed')).at(-1)!;
      t.same(Object.keys(failed.payload).sort(), ['code', 'login_id', 'state']);
      t.notMatch(client.received.join('\n'), 'forged-state-value');
      t.equal(server.tokenRequests.length, 0);
      t.notOk(existsSync(join(daemon.home, 'credentials.json')));
    });

    t.test('no login waiting is a conflict; a URL that is not one is invalid_payload', async (t) => {
      const server = await startOAuthServer(t);
      const daemon = await startOAuthDaemon(t, server);
      const client = await daemon.connect(transport);
      const none = await client.request(
        'auth.login_callback',
        { url: 'http://127.0.0.1:1/callback?code=c&state=s' },
        { operation: op() },
      );
      t.equal(codeOf(none), 'conflict');
      resultOf(await client.request('auth.login', { method: 'oauth' }, { operation: op() }));
      await authorizationUrl(client);
      for (const payload of [{ url: 'not a url at all' }, { url: '' }, { url: 'x'.repeat(8193) }, {}]) {
        const refused = await client.request('auth.login_callback', payload, { operation: op() });
        t.equal(codeOf(refused), 'invalid_payload');
        t.notMatch(JSON.stringify(refused), 'not a url at all');
      }
      t.same(await client.call('auth.cancel', {}, { operation: op() }), { cancelled: true }, 'still waiting');
    });
  });
}
