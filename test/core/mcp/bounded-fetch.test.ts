import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { boundedFetch } from '../../../core/mcp/bounded-fetch.js';

const LIMIT = 64;

/** A loopback server answering each path with the body and content type it is given. */
async function serving(t: Tap, bodies: Record<string, [string, string]>): Promise<string> {
  const server = createServer((req, res) => {
    const [type, body] = bodies[req.url ?? ''] ?? ['text/plain', ''];
    res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': type });
    // In small pieces, so that an event's bytes are counted across chunks.
    for (let i = 0; i < body.length; i += 7) res.write(body.slice(i, i + 7));
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type Tap = { teardown(fn: () => unknown): void };

const event = (bytes: number) => `data: ${'x'.repeat(bytes - 'data: '.length)}`;

t.test('a JSON body is read up to its bound and fails one byte past it', async (t) => {
  const base = await serving(t, {
    '/at': ['application/json', `"${'a'.repeat(LIMIT - 2)}"`],
    '/past': ['application/json', `"${'a'.repeat(LIMIT - 1)}"`],
    '/missing': ['text/plain', 'x'.repeat(LIMIT * 4)],
  });
  const fetchBounded = boundedFetch(LIMIT);
  t.equal((await (await fetchBounded(`${base}/at`)).text()).length, LIMIT);
  await t.rejects((await fetchBounded(`${base}/past`)).text(), RangeError);
  const missing = await fetchBounded(`${base}/missing`);
  t.equal(missing.status, 404, 'an error answer is passed on as it is');
});

t.test('an event stream is bounded per event, however many events it carries', async (t) => {
  const many = Array.from({ length: 20 }, () => event(LIMIT)).join('\n\n');
  const base = await serving(t, {
    '/many': ['text/event-stream', `${many}\n\n`],
    '/crlf': ['text/event-stream', `${event(LIMIT)}\r\n\r\n${event(LIMIT)}\r\n\r\n`],
    '/cr': ['text/event-stream', `${event(LIMIT)}\r\r${event(LIMIT)}\r\r`],
    '/lines': ['text/event-stream', `${event(LIMIT / 2)}\n${event(LIMIT / 2 + 1)}\n\n`],
    '/past': ['text/event-stream', `${event(LIMIT)}\n\n${event(LIMIT + 1)}\n\n`],
  });
  const fetchBounded = boundedFetch(LIMIT);
  t.equal(
    (await (await fetchBounded(`${base}/many`)).text()).length,
    many.length + 2,
    '20 events at the bound',
  );
  t.ok((await (await fetchBounded(`${base}/crlf`)).text()).length > 2 * LIMIT, 'CRLF line ends');
  t.ok((await (await fetchBounded(`${base}/cr`)).text()).length > 2 * LIMIT, 'CR line ends');
  await t.rejects((await fetchBounded(`${base}/lines`)).text(), RangeError, 'the lines of one event add up');
  await t.rejects((await fetchBounded(`${base}/past`)).text(), RangeError, 'one event past the bound');
});
