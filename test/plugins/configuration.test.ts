import pino from 'pino';
import t from 'tap';
import { op, startDaemon } from '../helpers/daemon.js';

const SECRET = 'sk-settings-value-6c0d';

function capture() {
  const lines: string[] = [];
  return { lines, logger: pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }) };
}

t.test('a settings file the daemon cannot use is reported by pointer at startup and ignored', async (t) => {
  const home = t.testdir({ 'settings.json': JSON.stringify({ model: `${SECRET} x`, fast: true }) });
  const log = capture();
  const daemon = await startDaemon(t, {
    home,
    logger: log.logger,
    provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'startup-model', apiKey: null },
  });
  const warning = log.lines.map((line) => JSON.parse(line)).find((entry) => entry.pointer !== undefined);
  t.match(warning, {
    level: 40,
    pointer: '/model',
    msg: 'the settings file is not valid; running on the default settings',
  });
  t.notMatch(log.lines.join('\n'), SECRET);
  t.notOk(log.lines.join('\n').includes(home));
  const client = await daemon.connect('in-process');
  t.match(
    await client.call('status'),
    { provider: { model: 'startup-model' } },
    'fast and model are defaults',
  );
  t.same(daemon.app.modelSettings.selection(null), {
    model: 'startup-model',
    reasoningEffort: null,
    fast: false,
  });
});

t.test('a settings file it cannot read is reported by its error code', async (t) => {
  const home = t.testdir({ 'settings.json': { 'not-a-file': 'x' } });
  const log = capture();
  const daemon = await startDaemon(t, { home, logger: log.logger });
  t.match(
    log.lines.map((line) => JSON.parse(line)).find((entry) => entry.code !== undefined),
    { code: 'EISDIR', msg: 'the settings file cannot be read; running on the default settings' },
  );
  const client = await daemon.connect('in-process');
  t.equal(
    (
      await client.request(
        'settings.update',
        { workspace: null, changes: { fast: true } },
        { operation: op() },
      )
    ).error?.code,
    'conflict',
  );
});

t.test('the worker is let go after an answer, refusals included', async (t) => {
  const daemon = await startDaemon(t);
  const client = await daemon.connect('in-process');
  const refused = await client.request('settings.get', { workspace: null, extra: 1 });
  t.equal(refused.error?.code, 'invalid_payload');
  const conflict = await client.request(
    'settings.update',
    { workspace: null, changes: { model: 'unknown' } },
    { operation: op() },
  );
  t.equal(conflict.error?.code, 'conflict');
  t.equal(daemon.app.configurationWorker.busy, false);
  t.ok((await client.request('settings.get', { workspace: null })).ok);
});
