import t from 'tap';
import { cutAt, destroy, done, sse } from './provider-streams.js';
import { ScriptedProvider } from './scripted-provider.js';

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-test': 'yes' },
    body: JSON.stringify(body),
  });
}

t.test('answers queued responses in order and records each request', async (t) => {
  const provider = await ScriptedProvider.start(t);
  provider.reply(['Hel', 'lo']).replyStatus(429, { headers: { 'retry-after': '1' } });
  t.equal(provider.pending, 2);
  t.match(provider.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);

  const first = await post(provider.baseUrl, { model: 'm', n: 1 });
  t.equal(first.status, 200);
  t.equal(first.headers.get('content-type'), 'text/event-stream');
  const text = await first.text();
  t.match(text, /^data: \{.*"role":"assistant".*\n\ndata: \{.*"content":"Hel"/s);
  t.ok(text.endsWith('data: [DONE]\n\n'));

  const second = await post(provider.baseUrl, { model: 'm', n: 2 });
  t.equal(second.status, 429);
  t.equal(second.headers.get('retry-after'), '1');
  t.same(await second.json(), { error: { message: 'scripted failure', type: 'error' } });

  t.equal(provider.requests.length, 2);
  t.match(provider.requests[0], {
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'x-test': 'yes', 'content-type': 'application/json' },
    body: { model: 'm', n: 1 },
  });
  t.same((await provider.nextRequest()).body, { model: 'm', n: 1 });
  t.same((await provider.nextRequest()).body, { model: 'm', n: 2 });
  t.equal(provider.unexpected, 0);
});

t.test('nextRequest waits for a request still to come', async (t) => {
  const provider = await ScriptedProvider.start(t);
  provider.reply(['x']);
  const next = provider.nextRequest();
  await (await post(provider.baseUrl, { a: 1 })).text();
  t.same((await next).body, { a: 1 });
});

t.test('a request with nothing queued is answered 400 and counted', async (t) => {
  const provider = await ScriptedProvider.start(t);
  const response = await post(provider.baseUrl, {});
  t.equal(response.status, 400);
  t.equal(response.headers.get('x-should-retry'), 'false');
  t.equal(provider.unexpected, 1);
});

t.test('bytes cut anywhere arrive whole, in order', async (t) => {
  const provider = await ScriptedProvider.start(t);
  const stream = 'data: {"content":"é🙂"}\r\n\r\n';
  provider.script({ status: 200, headers: {}, steps: cutAt(stream, [1, 7, 20, 21, 25, 26]) });
  t.equal(await (await post(provider.baseUrl, {})).text(), stream);
});

t.test('a hold waits for its release; a client that leaves is seen', async (t) => {
  const provider = await ScriptedProvider.start(t);
  const hold = provider.hold();
  provider.script({ status: 200, headers: {}, steps: [sse({ a: 1 }), hold, done()] });
  const controller = new AbortController();
  const response = await fetch(`${provider.baseUrl}/chat/completions`, {
    method: 'POST',
    body: '{}',
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  t.equal(Buffer.from((await reader.read()).value!).toString(), 'data: {"a":1}\n\n');
  await hold.reached;
  const request = await provider.nextRequest();
  controller.abort();
  await request.disconnected;
  t.pass('the server saw the client leave while held');
});

t.test('a released hold lets the response finish; destroy breaks the connection', async (t) => {
  const provider = await ScriptedProvider.start(t);
  const hold = provider.hold();
  provider.script({ status: 200, headers: {}, steps: [sse({ a: 1 }), hold, done()] });
  provider.script({ status: 200, headers: {}, steps: [sse({ b: 2 }), destroy()] });
  const answer = post(provider.baseUrl, {}).then((response) => response.text());
  await hold.reached;
  hold.release();
  t.equal(await answer, 'data: {"a":1}\n\ndata: [DONE]\n\n');
  await t.rejects((await post(provider.baseUrl, {})).text(), 'the body breaks');
});

t.test('closing ends held responses', async (t) => {
  const provider = await ScriptedProvider.start(t);
  const hold = provider.hold();
  provider.script({ status: 200, headers: {}, steps: [hold, done()] });
  const answer = post(provider.baseUrl, {}).then((response) => response.text());
  await hold.reached;
  await provider.close();
  await t.rejects(answer, 'the client sees the connection end rather than waiting');
});
