import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

const SECRET = 'sk-status-secret-7d1e';

for (const transport of TRANSPORTS) {
  t.test(`auth.status (${transport})`, async (t) => {
    t.test('without a key the provider is not ready for auth', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.same(await client.call('auth.status'), { ready: false, method: null });
    });

    t.test('the environment key is reported as env and never shown', async (t) => {
      const daemon = await startDaemon(t, {
        provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: SECRET },
      });
      const client = await daemon.connect(transport);
      const answer = await client.request('auth.status');
      t.same(answer.result, { ready: true, method: 'env' });
      t.notMatch(JSON.stringify(answer), SECRET);
    });

    t.test('a key stored by an earlier login is reported as stored', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      await client.call('auth.login', { method: 'api_key', api_key: SECRET }, { operation: op() });
      t.same(await client.call('auth.status'), { ready: true, method: 'stored' });
    });

    t.test('a stored key is read at startup; an unreadable file holds none', async (t) => {
      const home = t.testdir({ 'credentials.json': JSON.stringify({ api_key: SECRET }) });
      const daemon = await startDaemon(t, { home });
      const client = await daemon.connect(transport);
      t.same(await client.call('auth.status'), { ready: true, method: 'stored' });
      const broken = t.testdir({ 'credentials.json': 'not json' });
      const other = await (await startDaemon(t, { home: broken })).connect(transport);
      t.same(await other.call('auth.status'), { ready: false, method: null });
    });

    t.test('it is a read: an operation id is refused and a payload member too', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.equal((await client.request('auth.status', {}, { operation: op() })).error?.code, 'invalid_request');
      t.equal((await client.request('auth.status', { verbose: true })).error?.code, 'invalid_payload');
    });
  });
}
