import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { op, startDaemon } from '../helpers/daemon.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { listing } from './catalog.fixture.js';
import { codeOf, controller, resultOf } from './session.resources.fixture.js';
import { startTurn } from './turn.fixture.js';

const SECRET = 'sk-never-anywhere-3b8e61';

function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

t.test(
  'a stored key reaches the provider and nothing else: no log, error, response, history or SQLite file',
  async (t) => {
    const provider = await ScriptedProvider.start(t);
    const logLines: string[] = [];
    const daemon = await startDaemon(t, {
      provider: { baseUrl: provider.baseUrl, model: 'scripted-model', apiKey: null },
      logger: pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) }),
      providerTuning: { limits: { attempts: 1 } },
    });
    const who = await controller(daemon, 'socket');
    const client = who.client;

    t.equal(
      codeOf(
        await client.request('auth.login', { method: 'api_key', api_key: `${SECRET} ` }, { operation: op() }),
      ),
      'invalid_payload',
    );
    const login = op();
    await client.call('auth.login', { method: 'api_key', api_key: SECRET }, { operation: login });
    await client.call('operation.lookup', { operation_id: login });
    await client.call('auth.status');
    await client.call('status');

    provider.replyModels({ error: { message: `invalid api key ${SECRET}` } }, 401);
    t.equal(codeOf(await client.request('catalog.refresh', {}, { operation: op() })), 'provider_error');
    provider.replyModels(listing(['model-a'], { permission: [{ note: SECRET }] }));
    await client.call('catalog.refresh', {}, { operation: op() });
    await client.call('catalog.list');

    provider.replyStatus(401, { message: `invalid api key ${SECRET}`, headers: { 'x-echo': SECRET } });
    resultOf(await startTurn(who, { prompt: 'first' }));
    t.match((await client.event('turn.terminal')).payload, {
      status: 'failed',
      error: { code: 'provider_error' },
    });
    provider.reply([`I will not repeat it`]);
    resultOf(await startTurn(who, { prompt: 'second' }));
    await client.event('turn.terminal');
    await client.call('session.replay', { cursor: null, limit: 100 }, { session: who.session });
    await client.call('auth.logout', {}, { operation: op() });
    await client.call('auth.login', { method: 'api_key', api_key: SECRET }, { operation: op() });

    const keyed = provider.requests.filter((request) => request.headers.authorization === `Bearer ${SECRET}`);
    t.equal(keyed.length, provider.requests.length, 'every provider request carried the key');
    t.ok(keyed.length >= 4);

    await daemon.app.close();
    t.notMatch(client.received.join('\n'), SECRET, 'no response or event');
    t.ok(logLines.length > 0, 'the daemon did log');
    t.notMatch(logLines.join('\n'), SECRET, 'no log line');
    t.notOk(logLines.join('\n').includes(daemon.home), 'no log line names the home');
    const holding = filesUnder(daemon.home)
      .filter((file) => readFileSync(file).includes(SECRET))
      .map((file) => relative(daemon.home, file));
    t.same(holding, ['credentials.json'], 'only the credentials file, not the history or any SQLite file');
    t.ok(
      filesUnder(daemon.home).some((file) => file.endsWith('history.sqlite3')),
      'the SQLite files were searched',
    );
  },
);
