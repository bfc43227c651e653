import { inspect } from 'node:util';
import t from 'tap';
import { PROVIDER_LIMITS } from '../../../core/limits.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { chunk, destroy, done, raw, sse, stream, USAGE } from '../../helpers/provider-streams.js';
import { ScriptedProvider } from '../../helpers/scripted-provider.js';
import { providerFixture, request, settle } from './provider-fixture.js';

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error('the round did not fail');
}

t.test('a text round: the request as sent, the events and the round', async (t) => {
  const { server, run, events } = await providerFixture(t, {
    apiKey: 'sk-test-key',
    headers: { 'X-Title': 'magi', 'HTTP-Referer': 'https://example.invalid' },
  });
  server.reply(['Hel', 'lo'], { usage: USAGE });
  const round = await run({
    system: 'Be brief.',
    tools: [{ name: 'get_time', description: 'The time', parameters: { type: 'object' } }],
  });
  t.same(round, {
    text: 'Hello',
    toolCalls: [],
    finishReason: 'stop',
    usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 },
  });
  t.same(events, [
    { kind: 'text', delta: 'Hel' },
    { kind: 'text', delta: 'lo' },
  ]);
  t.equal(server.requests.length, 1);
  const sent = server.requests[0]!;
  t.equal(sent.method, 'POST');
  t.equal(sent.path, '/v1/chat/completions');
  t.match(sent.headers, {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    authorization: 'Bearer sk-test-key',
    'x-title': 'magi',
    'http-referer': 'https://example.invalid',
  });
  t.same(sent.body, {
    model: 'scripted-model',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    tools: [
      {
        type: 'function',
        function: { name: 'get_time', description: 'The time', parameters: { type: 'object' } },
      },
    ],
    stream: true,
    stream_options: { include_usage: true },
  });
});

t.test('without a key there is no authorization header; usage can be left unasked', async (t) => {
  const { server, run } = await providerFixture(t, { streamUsage: false });
  server.reply(['ok']);
  await run();
  t.notOk('authorization' in server.requests[0]!.headers);
  t.notOk('stream_options' in server.requests[0]!.body);
});

t.test('a tool call round, then its continuation', async (t) => {
  const { server, run, events } = await providerFixture(t);
  server.replyToolCalls([{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }]);
  const round = await run();
  t.same(round.toolCalls, [{ id: 'call_1', name: 'get_weather', arguments: '{"location":"Paris"}' }]);
  t.equal(round.finishReason, 'tool_calls');
  t.same(events, [{ kind: 'tool_call_started' }]);

  server.reply(['Sunny.']);
  await run({
    messages: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '', toolCalls: round.toolCalls },
      { role: 'tool', toolCallId: 'call_1', content: 'sunny' },
    ],
  });
  t.same(server.requests[1]!.body.messages.slice(1), [
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
  ]);
});

t.test('retries: 429 and 5xx before any output, after the exact waits, with the same request', async (t) => {
  const { server, run, retries, clock } = await providerFixture(t);
  server.replyStatus(500).replyStatus(503).replyStatus(529).replyStatus(429).reply(['ok']);
  const round = await run();
  t.equal(round.text, 'ok');
  t.same(
    retries.map(({ attempt, delayMs, kind, status }) => [attempt, delayMs, kind, status]),
    [
      [1, 500, 'http_status', 500],
      [2, 1_000, 'http_status', 503],
      [3, 2_000, 'http_status', 529],
      [4, 4_000, 'http_status', 429],
    ],
  );
  t.equal(clock.now(), 7_500);
  t.equal(server.requests.length, 5);
  for (const sent of server.requests) t.same(sent.body, server.requests[0]!.body);
});

t.test('408 and 409 are retried; other 4xx are not', async (t) => {
  const { server, run } = await providerFixture(t);
  server.replyStatus(408).replyStatus(409).reply(['ok']);
  t.equal((await run()).text, 'ok');
  server.replyStatus(400);
  const error = await failure(run());
  t.match(error, { kind: 'http_status', status: 400 });
  t.equal(server.requests.length, 4);
});

t.test('the attempts are bounded', async (t) => {
  const { server, run, retries } = await providerFixture(t);
  for (let i = 0; i < PROVIDER_LIMITS.attempts + 1; i++) server.replyStatus(502);
  const error = await failure(run());
  t.match(error, { kind: 'http_status', status: 502 });
  t.equal(server.requests.length, PROVIDER_LIMITS.attempts);
  t.same(
    retries.map((retry) => retry.delayMs),
    [500, 1_000, 2_000, 4_000],
  );
});

t.test('retry-after-ms, retry-after in seconds and as a date, and the cap on hints', async (t) => {
  const { server, run, retries, clock } = await providerFixture(t);
  const inTen = new Date(clock.wallNow() + 10_000).toUTCString();
  server
    .replyStatus(429, { headers: { 'retry-after-ms': '1234', 'retry-after': '60' } })
    .replyStatus(429, { headers: { 'retry-after': '2' } })
    .replyStatus(503, { headers: { 'retry-after': inTen } })
    .replyStatus(503, { headers: { 'retry-after': '3600' } })
    .reply(['ok']);
  await run();
  t.same(
    retries.map((retry) => retry.delayMs),
    [1_234, 2_000, 10_000 - 1_234 - 2_000, PROVIDER_LIMITS.retry_hint_cap_ms],
    'a date counts from the time of the answer',
  );
});

t.test('x-should-retry overrules the status', async (t) => {
  const { server, run } = await providerFixture(t);
  server.replyStatus(400, { headers: { 'x-should-retry': 'true' } }).reply(['ok']);
  t.equal((await run()).text, 'ok');
  server.replyStatus(503, { headers: { 'x-should-retry': 'false' } });
  t.match(await failure(run()), { kind: 'http_status', status: 503 });
  t.equal(server.requests.length, 3);
});

t.test('an unreachable server is retried, then reported', async (t) => {
  const closed = await ScriptedProvider.start(t);
  const baseUrl = closed.baseUrl;
  await closed.close();
  const { retries, provider } = await providerFixture(t, { baseUrl });
  const error = await failure(provider.complete(request(), () => {}));
  t.match(error, { kind: 'unreachable', status: null });
  t.equal(retries.length, PROVIDER_LIMITS.attempts - 1);
});

t.test('a connection broken before any output is retried', async (t) => {
  const { server, run, retries } = await providerFixture(t);
  server.script(stream([raw(': ping\n\n'), destroy()])).reply(['ok']);
  t.equal((await run()).text, 'ok');
  t.match(retries, [{ kind: 'truncated', status: null }]);
});

t.test('nothing is replayed once output has reached the consumer', async (t) => {
  const broken = await providerFixture(t);
  broken.server.script(stream([sse(chunk({ content: 'Hi' })), destroy()])).reply(['again']);
  t.match(await failure(broken.run()), { kind: 'truncated' });
  t.equal(broken.server.requests.length, 1);
  t.same(broken.events, [{ kind: 'text', delta: 'Hi' }]);

  const reasoning = await providerFixture(t);
  reasoning.server.script(stream([sse(chunk({ reasoning_content: 'hm' })), destroy()])).reply(['again']);
  t.match(await failure(reasoning.run()), { kind: 'truncated' });
  t.equal(reasoning.server.requests.length, 1, 'reasoning is output too');
});

t.test('stream failures are not retried', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(stream([]));
  t.match(await failure(run()), { kind: 'empty_response' });
  server.script(stream([sse(chunk({ content: 'Hi' }))]));
  t.match(await failure(run()), { kind: 'truncated' });
  server.script(stream([sse({ error: { message: 'x' } })]));
  t.match(await failure(run()), { kind: 'in_band_error' });
  server.script(stream([sse('not json')]));
  t.match(await failure(run()), { kind: 'malformed_stream' });
  t.equal(server.requests.length, 4);
});

t.test('a 2xx without a body is an empty response', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script({ status: 204, headers: {}, steps: [] });
  t.match(await failure(run()), { kind: 'empty_response' });
});

t.test('nothing after [DONE] is read', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(
    stream([sse(chunk({ content: 'a' }, { finishReason: 'stop' })), done(), raw('data: junk\n\n')]),
  );
  t.equal((await run()).text, 'a');
});

t.test('redirects are not followed', async (t) => {
  const { server, run } = await providerFixture(t);
  const elsewhere = await ScriptedProvider.start(t);
  elsewhere.reply(['stolen']);
  server.replyStatus(307, { headers: { location: `${elsewhere.baseUrl}/chat/completions` } });
  t.match(await failure(run()), { kind: 'http_status', status: 307 });
  t.equal(elsewhere.requests.length, 0);
});

t.test('an answer over the byte bound is too large', async (t) => {
  const { server, run } = await providerFixture(t, { limits: { response_bytes: 300 } });
  server.reply(['x'.repeat(400)]);
  t.match(await failure(run()), { kind: 'too_large' });
});

t.test('the idle watchdog: silence aborts the request, every byte resets it', async (t) => {
  const idle = PROVIDER_LIMITS.idle_timeout_ms;
  const { server, run, clock } = await providerFixture(t);
  const first = server.hold();
  const second = server.hold();
  server.script(
    stream([
      sse(chunk({ content: 'a' })),
      first,
      raw(': ping\n\n'),
      second,
      sse(chunk({}, { finishReason: 'stop' })),
    ]),
  );
  const round = run();
  await first.reached;
  await settle();
  clock.advance(idle - 1);
  first.release();
  await second.reached;
  await settle();
  clock.advance(idle - 1);
  second.release();
  t.equal((await round).text, 'a', 'a keep-alive comment resets the watchdog');

  const silent = server.hold();
  server.script(stream([sse(chunk({ content: 'a' })), silent, done()]));
  const stalled = run();
  await silent.reached;
  const sent = server.requests[1]!;
  await settle();
  clock.advance(idle);
  t.match(await failure(stalled), { kind: 'idle_timeout' });
  await sent.disconnected;
  t.pass('the server saw the request end');
});

t.test('timers that run early never act early: the watchdog, the deadline and the backoff', async (t) => {
  const idle = PROVIDER_LIMITS.idle_timeout_ms;
  const { server, run, clock, retries } = await providerFixture(t, {
    earlyMs: 1_000,
    limits: { request_deadline_ms: 2 * idle },
  });
  const quiet = server.hold();
  server.replyStatus(503).script(stream([sse(chunk({ content: 'a' })), quiet, done()]));
  const round = run();
  await quiet.reached;
  await settle();
  t.equal(clock.now(), 500, 'the backoff waited exactly');
  t.same(
    retries.map((retry) => retry.delayMs),
    [500],
  );
  clock.advance(idle - 1);
  quiet.release();
  t.equal((await round).text, 'a', 'the watchdog did not fire a millisecond early');

  const silent = server.hold();
  server.script(stream([sse(chunk({ content: 'a' })), silent, done()]));
  const stalled = run();
  await silent.reached;
  await settle();
  clock.advance(idle);
  t.match(await failure(stalled), { kind: 'idle_timeout' });
});

t.test('the deadline bounds a request however busy', async (t) => {
  const { server, run, clock } = await providerFixture(t, {
    limits: { request_deadline_ms: 10_000, idle_timeout_ms: 6_000 },
  });
  const holds = [server.hold(), server.hold()];
  server.script(stream([sse(chunk({ content: 'a' })), holds[0]!, raw(': ping\n\n'), holds[1]!, done()]));
  const round = run();
  await holds[0]!.reached;
  await settle();
  clock.advance(5_000);
  holds[0]!.release();
  await holds[1]!.reached;
  await settle();
  clock.advance(5_000);
  t.match(await failure(round), { kind: 'deadline' });
});

t.test('cancellation aborts the HTTP request', async (t) => {
  const { server, provider } = await providerFixture(t);
  const hold = server.hold();
  server.script(stream([sse(chunk({ content: 'a' })), hold, done()]));
  const controller = new AbortController();
  const events: unknown[] = [];
  const round = provider.complete(request({ signal: controller.signal }), (event) => events.push(event));
  await hold.reached;
  const sent = await server.nextRequest();
  await settle();
  controller.abort();
  t.match(await failure(round), { kind: 'cancelled' });
  await sent.disconnected;
  t.same(events, [{ kind: 'text', delta: 'a' }]);
});

t.test('a cancelled signal sends nothing; cancelling during a backoff stops the retries', async (t) => {
  const { server, provider, retries } = await providerFixture(t, { passWaits: false });
  const aborted = new AbortController();
  aborted.abort();
  t.match(await failure(provider.complete(request({ signal: aborted.signal }), () => {})), {
    kind: 'cancelled',
  });
  t.equal(server.requests.length, 0);

  server.replyStatus(503).reply(['never']);
  const controller = new AbortController();
  const round = provider.complete(request({ signal: controller.signal }), () => {});
  while (retries.length === 0) await settle();
  controller.abort();
  t.match(await failure(round), { kind: 'cancelled' });
  t.equal(server.requests.length, 1);
});

t.test('an error thrown by onEvent aborts the request and comes out unchanged', async (t) => {
  const { server, run } = await providerFixture(t);
  const hold = server.hold();
  server.script(stream([sse(chunk({ content: 'too much' })), hold, done()])).reply(['not retried']);
  const refusal = new RangeError('the assistant text budget is spent');
  const rejected = run({}, () => {
    throw refusal;
  }).catch((error: unknown) => error);
  const sent = await server.nextRequest();
  await sent.disconnected;
  t.equal(await rejected, refusal);
  t.equal(server.requests.length, 1);
});

const SECRET = 'sk-live-7f3a9c1e5b2d-secret';

t.test('no failure carries the provider text, headers or key', async (t) => {
  const { server, run } = await providerFixture(t, { apiKey: SECRET, headers: { 'x-api-key': SECRET } });
  server
    .replyStatus(400, { message: `bad key ${SECRET}`, headers: { 'x-echo': SECRET } })
    .script(stream([sse({ error: { message: SECRET } })]))
    .script(stream([raw(`event: error\ndata: {"message":"${SECRET}"}\n\n`)]))
    .script(stream([sse(chunk({ content: 'a' })), raw(`error: ${SECRET}\n\n`)]))
    .script(stream([sse(`{"choices": "${SECRET}`)]))
    .script(stream([raw(`data: ${SECRET}\n\n`)]));
  for (let i = 0; i < 6; i++) {
    const error = await failure(run());
    const shown = [
      String(error),
      error.message,
      error.stack,
      JSON.stringify(error),
      inspect(error, { depth: 9 }),
    ];
    for (const text of shown) t.notMatch(text, SECRET, `${error.kind}: nothing of the provider shows`);
    t.equal(error.cause, undefined);
  }
  t.equal(server.requests.length, 6);
  t.equal(server.requests[0]!.headers['x-api-key'], SECRET, 'the key was sent all the same');
});
