import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { HttpPoster } from '../../../core/provider/http-post.js';

async function listening<T extends { listen: (port: number, host: string, done: () => void) => unknown }>(
  t: Test,
  server: T & { close: () => unknown; address: () => unknown },
): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return (server.address() as { port: number }).port;
}

async function text(body: AsyncIterable<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

t.test(
  'posts the body with its length and streams the answer; one kept-alive connection serves both',
  async (t) => {
    const connections = new Set<Socket>();
    const received: string[] = [];
    const server = createHttpServer((request, response) => {
      connections.add(request.socket);
      void text(request).then((body) => {
        received.push(`${request.method} ${request.url} ${request.headers['content-length']} ${body}`);
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: one\n\n');
        response.end('data: [DONE]\n\n');
      });
    });
    const port = await listening(t, server);
    t.teardown(() => server.closeAllConnections());
    const poster = new HttpPoster();
    const url = new URL(`http://127.0.0.1:${port}/v1/chat/completions`);
    for (let round = 0; round < 2; round++) {
      const response = await poster.post(
        url,
        { 'content-type': 'application/json' },
        '{"é":1}',
        new AbortController().signal,
      );
      t.equal(response.status, 200);
      t.equal(await text(response.body), 'data: one\n\ndata: [DONE]\n\n');
    }
    t.same(received, Array(2).fill('POST /v1/chat/completions 8 {"é":1}'), 'the length counts bytes');
    t.equal(connections.size, 1, 'the second request reused the first connection');
  },
);

t.test('finish drains an answer received whole and cuts one still arriving', async (t) => {
  const connections = new Set<Socket>();
  let cut = false;
  const server = createHttpServer((request, response) => {
    connections.add(request.socket);
    response.writeHead(200);
    if (request.url === '/whole') {
      response.end('data: [DONE]\n\n');
      return;
    }
    response.write('data: [DONE]\n\n');
    response.on('close', () => {
      cut = !response.writableEnded;
    });
  });
  const port = await listening(t, server);
  t.teardown(() => server.closeAllConnections());
  const poster = new HttpPoster();
  const first = async (path: string) => {
    const response = await poster.post(
      new URL(`http://127.0.0.1:${port}${path}`),
      {},
      '{}',
      new AbortController().signal,
    );
    for await (const _ of response.body) break;
    return response;
  };
  const whole = await first('/whole');
  await new Promise((resolve) => setTimeout(resolve, 20));
  whole.finish();
  (await first('/whole')).finish();
  t.equal(connections.size, 1, 'the drained connection served the next request');
  const open = await first('/open');
  open.finish();
  while (!cut) await new Promise((resolve) => setTimeout(resolve, 5));
  t.ok(cut, 'the answer still arriving was cut');
});

t.test('a redirect is answered as a status, never followed; its headers are readable', async (t) => {
  let requests = 0;
  const server = createHttpServer((_request, response) => {
    requests += 1;
    response.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere', 'retry-after': '3' });
    response.end();
  });
  const port = await listening(t, server);
  const response = await new HttpPoster().post(
    new URL(`http://127.0.0.1:${port}/v1/chat/completions`),
    {},
    '{}',
    new AbortController().signal,
  );
  t.equal(response.status, 307);
  t.equal(response.headers().get('retry-after'), '3');
  t.equal(requests, 1);
});

t.test('an https URL speaks TLS; an abort before the answer rejects', async (t) => {
  let firstBytes: Buffer | null = null;
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.once('data', (data) => {
      firstBytes = data;
    });
  });
  const port = await listening(t, server);
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
  });
  const abort = new AbortController();
  const pending = new HttpPoster().post(new URL(`https://127.0.0.1:${port}/v1`), {}, '{}', abort.signal);
  while (firstBytes === null) await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal((firstBytes as Buffer)[0], 0x16, 'a TLS handshake record, not a plain request line');
  abort.abort();
  await t.rejects(pending);
});
