import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

const SECRET = 'sk-login-secret-0a9f';

function login(apiKey: string) {
  return { method: 'api_key', api_key: apiKey };
}

for (const transport of TRANSPORTS) {
  t.test(`auth.login (${transport})`, async (t) => {
    t.test('stores the key 0600 in the home and never echoes it', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const operation = op();
      const answer = await client.request('auth.login', login(SECRET), { operation });
      t.same(answer.result, { ready: true, method: 'stored' });
      const file = join(daemon.home, 'credentials.json');
      t.equal(statSync(file).mode & 0o777, 0o600);
      t.equal(statSync(daemon.home).mode & 0o777, 0o700, 'the home it created is private');
      t.same(JSON.parse(readFileSync(file, 'utf8')), { api_key: SECRET });
      const lookup = await client.call('operation.lookup', { operation_id: operation });
      t.match(lookup, {
        method: 'auth.login',
        status: 'completed',
        result: { ready: true, method: 'stored' },
      });
      t.notMatch(client.received.join('\n'), SECRET);
    });

    t.test('the next turn uses the stored key without a restart', async (t) => {
      const provider = await ScriptedProvider.start(t);
      const daemon = await startDaemon(t, {
        provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      });
      provider.reply(['before']).reply(['after']);
      const who = await controller(daemon, transport);
      resultOf(await startTurn(who, { prompt: 'one' }));
      await who.client.event('turn.terminal');
      t.notOk('authorization' in provider.requests[0]!.headers, 'no key before the login');
      await who.client.call('auth.login', login(SECRET), { operation: op() });
      resultOf(await startTurn(who, { prompt: 'two' }));
      await who.client.event('turn.terminal');
      t.equal(provider.requests[1]!.headers.authorization, `Bearer ${SECRET}`);
    });

    t.test('the environment key wins over a stored one', async (t) => {
      const provider = await ScriptedProvider.start(t);
      const daemon = await startDaemon(t, {
        provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: 'sk-env-key' },
      });
      provider.reply(['ok']);
      const who = await controller(daemon, transport);
      t.same(await who.client.call('auth.login', login(SECRET), { operation: op() }), {
        ready: true,
        method: 'env',
      });
      resultOf(await startTurn(who, { prompt: 'one' }));
      await who.client.event('turn.terminal');
      t.equal(provider.requests[0]!.headers.authorization, 'Bearer sk-env-key');
    });

    t.test('a bad payload is invalid_payload, changes nothing and never echoes the key', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const refused = [
        { method: 'api_key' },
        { method: 'oauth', api_key: SECRET },
        { ...login(SECRET), extra: true },
        login(''),
        login(`${SECRET} with spaces`),
        login(`${SECRET}\u00e9`),
        login(`${SECRET}\n`),
        login('k'.repeat(513)),
        { method: 'api_key', api_key: 42 },
      ];
      for (const payload of refused) {
        const answer = await client.request('auth.login', payload, { operation: op() });
        t.equal(codeOf(answer), 'invalid_payload', JSON.stringify(payload).slice(0, 60));
      }
      t.equal(existsSync(join(daemon.home, 'credentials.json')), false);
      t.same(await client.call('auth.status'), { ready: false, method: null });
      t.notMatch(client.received.join('\n'), SECRET);
      t.equal(
        codeOf(await client.request('auth.login', login('k'.repeat(512)), { operation: op() })),
        'ok',
        '512 characters are accepted',
      );
    });

    t.test('it is a mutation: a missing operation id is invalid_request', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(codeOf(await client.request('auth.login', login(SECRET))), 'invalid_request');
      const operation = op();
      await client.call('auth.login', login(SECRET), { operation });
      t.equal(
        codeOf(await client.request('auth.login', login(SECRET), { operation })),
        'operation_already_known',
      );
    });

    t.test('a second login while one is in progress is configuration_busy', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const release = await daemon.app.configurationWorker.acquire();
      const first = client.request('auth.login', login('sk-first'), { operation: op() });
      await new Promise((resolve) => setImmediate(resolve));
      const second = await client.request('auth.login', login('sk-second'), { operation: op() });
      t.same(second.error, { code: 'configuration_busy', message: 'another login is in progress' });
      release();
      t.same((await first).result, { ready: true, method: 'stored' });
      t.same(JSON.parse(readFileSync(join(daemon.home, 'credentials.json'), 'utf8')), {
        api_key: 'sk-first',
      });
      t.equal(
        codeOf(await client.request('auth.login', login('sk-third'), { operation: op() })),
        'ok',
        'the next login is admitted once the first has answered',
      );
    });

    t.test('a home it cannot write is internal_error with fixed text, and nothing changes', async (t) => {
      // A directory where the file belongs: the rename into place fails.
      const home = t.testdir({ 'credentials.json': { 'keep.txt': 'x' } });
      const logLines: string[] = [];
      const daemon = await startDaemon(t, {
        home,
        logger: pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) }),
      });
      const client = await daemon.connect(transport);
      const answer = await client.request('auth.login', login(SECRET), { operation: op() });
      t.same(answer.error, { code: 'internal_error', message: 'internal error' });
      t.same(await client.call('auth.status'), { ready: false, method: null });
      t.same(readdirSync(home).sort(), ['credentials.json', 'state'], 'no temporary file is left');
      t.match(logLines.join('\n'), 'a daemon file could not be written', 'the failure is logged');
      t.notOk(logLines.join('\n').includes(home), 'without the path');
      t.notMatch(logLines.join('\n'), SECRET);
    });
  });
}
