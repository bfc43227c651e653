import type { LookupAddress } from 'node:dns';
import { createServer as createTcpServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { pinnedGet, pinnedLookup } from '../../../core/web/pinned-get.js';
import { serve } from './web-fixture.js';

function ask(
  lookup: ReturnType<typeof pinnedLookup>,
  options: Parameters<ReturnType<typeof pinnedLookup>>[1],
): unknown {
  let answer: unknown;
  lookup('a.test', options, (error, address, family) => {
    answer = { error, address, family };
  });
  return answer;
}

t.test('the pinned lookup answers with the checked addresses only', async (t) => {
  const lookup = pinnedLookup([
    { address: '192.0.2.1', family: 4 },
    { address: '2001:db8::1', family: 6 },
  ]);
  const all: LookupAddress[] = [
    { address: '192.0.2.1', family: 4 },
    { address: '2001:db8::1', family: 6 },
  ];
  t.same(ask(lookup, { all: true }), { error: null, address: all, family: undefined });
  t.same(ask(lookup, {}), { error: null, address: '192.0.2.1', family: 4 });
  t.same(ask(lookup, { family: 6 }), { error: null, address: '2001:db8::1', family: 6 });
  t.same(ask(lookup, { family: 'IPv6' }), { error: null, address: '2001:db8::1', family: 6 });
  t.same(ask(lookup, { family: 'IPv4' }), { error: null, address: '192.0.2.1', family: 4 });
  t.same(
    ask(pinnedLookup([{ address: '192.0.2.1', family: 4 }]), { family: 6 }),
    { error: null, address: '192.0.2.1', family: 4 },
    'without an address of the family asked for, the checked one is still the answer',
  );
});

t.test('a GET of a name goes to the checked address with the name as host', async (t) => {
  const served = await serve(t, (_request, response) => response.end('hi'));
  const response = await pinnedGet(
    {
      url: new URL(`http://a.test:${served.port}/page?q=1#frag`),
      host: 'a.test',
      addresses: [{ address: '127.0.0.1', family: 4 }],
    },
    { 'user-agent': 'magid' },
    new AbortController().signal,
  );
  t.equal(response.statusCode, 200);
  response.resume();
  t.match(served.requests, [
    { path: '/page?q=1', headers: { host: `a.test:${served.port}`, 'user-agent': 'magid' } },
  ]);
});

async function clientHello(t: Test, url: string, host: string) {
  let hello: Buffer = Buffer.alloc(0);
  const server = createTcpServer((socket: Socket) => {
    socket.once('data', (chunk: Buffer) => {
      hello = chunk;
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  await t.rejects(
    pinnedGet(
      {
        url: new URL(url.replace('PORT', String(port))),
        host,
        addresses: [{ address: '127.0.0.1', family: 4 }],
      },
      {},
      new AbortController().signal,
    ),
  );
  return hello;
}

t.test('https connects to the checked address, the TLS server name being the host', async (t) => {
  const named = await clientHello(t, 'https://a.test:PORT/', 'a.test');
  t.equal(named[0], 0x16, 'a TLS handshake reached the checked address');
  t.ok(named.includes('a.test'), 'the server name is the host');
  const literal = await clientHello(t, 'https://127.0.0.1:PORT/', '127.0.0.1');
  t.equal(literal[0], 0x16);
  t.notOk(literal.includes('127.0.0.1'), 'a literal address is sent as no server name');
});

t.test('a request aborted before its answer rejects and closes its connection', async (t) => {
  let arrived: () => void = () => {};
  const reached = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const served = await serve(t, () => arrived());
  const abort = new AbortController();
  const pending = pinnedGet(
    { url: new URL(served.url('/')), host: '127.0.0.1', addresses: [{ address: '127.0.0.1', family: 4 }] },
    {},
    abort.signal,
  );
  await reached;
  abort.abort();
  await t.rejects(pending);
  await served.allClosed();
  t.equal(served.connections, 1);
});
