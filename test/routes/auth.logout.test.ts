import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`auth.logout (${transport})`, async (t) => {
    t.test('removes the stored key; the next turn goes without it', async (t) => {
      const provider = await ScriptedProvider.start(t);
      const daemon = await startDaemon(t, {
        provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      });
      provider.reply(['ok']);
      const who = await controller(daemon, transport);
      await who.client.call('auth.login', { method: 'api_key', api_key: 'sk-gone' }, { operation: op() });
      const operation = op();
      t.same(await who.client.call('auth.logout', {}, { operation }), {
        removed: true,
        ready: false,
        method: null,
      });
      t.equal(existsSync(join(daemon.home, 'credentials.json')), false);
      t.match(await who.client.call('operation.lookup', { operation_id: operation }), {
        method: 'auth.logout',
        status: 'completed',
      });
      resultOf(await startTurn(who, { prompt: 'after' }));
      await who.client.event('turn.terminal');
      t.notOk('authorization' in provider.requests[0]!.headers);
    });

    t.test('with nothing stored it removes nothing', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.same(await client.call('auth.logout', {}, { operation: op() }), {
        removed: false,
        ready: false,
        method: null,
      });
    });

    t.test('a temporary copy of the key a killed write left is removed too', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const temporary = join(daemon.home, '.credentials.json.0a1b2c3d4e5f.tmp');
      writeFileSync(temporary, '{"api_key":"sk-torn"}\n');
      t.match(await client.call('auth.logout', {}, { operation: op() }), { removed: false });
      t.equal(existsSync(temporary), false);
    });

    t.test('an unreadable credentials file is removed too', async (t) => {
      const home = t.testdir({ 'credentials.json': 'not json' });
      const daemon = await startDaemon(t, { home });
      const client = await daemon.connect(transport);
      t.same(await client.call('auth.logout', {}, { operation: op() }), {
        removed: true,
        ready: false,
        method: null,
      });
      t.equal(existsSync(join(home, 'credentials.json')), false);
    });

    t.test('the environment key is not local credentials: it stays', async (t) => {
      const daemon = await startDaemon(t, {
        provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: 'sk-env' },
      });
      const client = await daemon.connect(transport);
      writeFileSync(join(daemon.home, 'credentials.json'), JSON.stringify({ api_key: 'sk-stored' }));
      t.same(await client.call('auth.logout', {}, { operation: op() }), {
        removed: true,
        ready: true,
        method: 'env',
      });
    });

    t.test('a payload member or a missing operation id is refused', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(
        codeOf(await client.request('auth.logout', { all: true }, { operation: op() })),
        'invalid_payload',
      );
      t.equal(codeOf(await client.request('auth.logout', {})), 'invalid_request');
    });
  });
}
