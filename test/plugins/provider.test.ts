import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { ProviderError } from '../../core/provider/provider-error.js';
import { buildApp } from '../../plugins/app.js';
import { request } from '../core/provider/provider-fixture.js';
import { startDaemon } from '../helpers/daemon.js';
import { fakeClock } from '../helpers/fake-clock.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';

const SECRET = 'sk-plugin-secret-91b2';

t.test('without a base URL there is no chat provider nor model listing', async (t) => {
  const unset = await startDaemon(t);
  t.equal(unset.app.chatProvider, null);
  t.same(unset.app.modelListings, []);
  t.equal(unset.app.provider.endpointConfigured, false);
  const modelOnly = await startDaemon(t, { provider: { baseUrl: null, model: 'm', apiKey: null } });
  t.equal(modelOnly.app.chatProvider, null);
});

t.test('a base URL without a model has a chat provider: the model is chosen per turn', async (t) => {
  const daemon = await startDaemon(t, {
    provider: { baseUrl: 'http://127.0.0.1:9/v1', model: null, apiKey: null },
  });
  t.ok(daemon.app.chatProvider);
  t.equal(daemon.app.modelListings.length, 1);
  t.equal(daemon.app.provider.endpointConfigured, true);
});

t.test('a configured provider runs rounds with the key and the daemon clock', async (t) => {
  const server = await ScriptedProvider.start(t);
  const waits: number[] = [];
  const daemon = await startDaemon(t, {
    provider: { baseUrl: server.baseUrl, model: 'scripted-model', apiKey: SECRET },
    providerTuning: {
      random: () => 0,
      onRetry: (notice) => {
        waits.push(notice.delayMs);
        daemon.clock.advance(notice.delayMs);
      },
    },
  });
  server.replyStatus(503).reply(['Hello']);
  const round = await daemon.app.chatProvider!.complete(request(), () => {});
  t.equal(round.text, 'Hello');
  t.same(waits, [500]);
  t.equal(daemon.clock.now(), 500, 'the backoff waited on the daemon clock');
  t.equal(server.requests[1]!.headers.authorization, `Bearer ${SECRET}`);
  t.same(server.requests[1]!.body.stream_options, { include_usage: true }, 'the defaults of the config file');
});

t.test('the tuning shortens bounds', async (t) => {
  const server = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: server.baseUrl, model: 'scripted-model', apiKey: null },
    providerTuning: { limits: { attempts: 1 } },
  });
  server.replyStatus(503);
  await t.rejects(
    daemon.app.chatProvider!.complete(request(), () => {}),
    { name: 'ProviderError', kind: 'http_status', status: 503 },
  );
  t.equal(server.requests.length, 1);
});

t.test('the provider section of the config file shapes every request', async (t) => {
  const server = await ScriptedProvider.start(t);
  const home = t.testdir();
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      provider: {
        headers: { 'X-Title': 'magi', 'x-api-key': SECRET },
        stream_usage: false,
        assistant_tool_call_content: 'null',
      },
    }),
  );
  const logLines: string[] = [];
  const clock = fakeClock();
  const app = await buildApp({
    home,
    clock,
    provider: { baseUrl: server.baseUrl, model: 'scripted-model', apiKey: null },
    logger: pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) }),
    providerTuning: { random: () => 0, onRetry: (notice) => clock.advance(notice.delayMs) },
  });
  t.teardown(() => app.close());
  await app.ready();

  server
    .replyStatus(429, { message: `rate limited for ${SECRET}`, headers: { 'x-echo': SECRET } })
    .reply(['ok']);
  await app.chatProvider!.complete(
    request({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'c', content: 'done' },
      ],
    }),
    () => {},
  );
  const sent = server.requests[1]!;
  t.match(sent.headers, { 'x-title': 'magi', 'x-api-key': SECRET });
  t.notOk('authorization' in sent.headers);
  t.notOk('stream_options' in sent.body);
  t.equal(sent.body.messages[1].content, null);

  const retried = logLines
    .map((line) => JSON.parse(line))
    .find((entry) => entry.msg === 'provider request failed; retrying');
  t.match(retried, { level: 40, attempt: 1, delay_ms: 500, kind: 'http_status', status: 429 });
  t.notMatch(logLines.join('\n'), SECRET, 'neither the header values nor the provider text are logged');
});

t.test('a provider failure seen through the plugin carries nothing of the provider', async (t) => {
  const server = await ScriptedProvider.start(t);
  const daemon = await startDaemon(t, {
    provider: { baseUrl: server.baseUrl, model: 'scripted-model', apiKey: SECRET },
  });
  server.replyStatus(401, { message: `invalid key ${SECRET}` });
  const error = await daemon.app
    .chatProvider!.complete(request(), () => {})
    .catch((caught: unknown) => caught);
  t.type(error, ProviderError);
  t.same(JSON.parse(JSON.stringify(error)), { kind: 'http_status', status: 401 });
  t.notMatch(String((error as Error).stack), SECRET);
});
