import { createServer as createTcpServer } from 'node:net';
import t from 'tap';
import { isPrivateAddress, isPublicAddress, WEB_FETCH_LIMITS } from '../../../core/web/web-fetch.js';
import { failed, fetcher, fetchNow, page, serve } from './web-fixture.js';

const loopback = async () => [{ address: '127.0.0.1', family: 4 as const }];

t.test(
  'loopback is refused by default, as a literal address or a name, and fetched when allowed',
  async (t) => {
    const served = await serve(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('hello');
    });
    const lookups: string[] = [];
    const { web } = fetcher({
      allowPrivateAddresses: false,
      lookup: async (host) => {
        lookups.push(host);
        return loopback();
      },
    });
    failed(t, await fetchNow(web, served.url('/')), 'address_not_allowed', 'a literal 127.0.0.1');
    failed(t, await fetchNow(web, `http://[::1]:${served.port}/`), 'address_not_allowed', 'a literal ::1');
    failed(
      t,
      await fetchNow(web, `http://a.test:${served.port}/`),
      'address_not_allowed',
      'a name for 127.0.0.1',
    );
    t.same(lookups, ['a.test'], 'only the name was looked up');
    const { web: system } = fetcher({ allowPrivateAddresses: false });
    failed(t, await fetchNow(system, `http://localhost:${served.port}/`), 'address_not_allowed', 'localhost');
    t.equal(served.connections, 0, 'no refused fetch connected');

    const { web: allowed } = fetcher({ lookup: loopback });
    t.same(page(t, await fetchNow(allowed, served.url('/hello?x=1'))), {
      url: served.url('/hello?x=1'),
      status: 200,
      content_type: 'text/plain; charset=utf-8',
      content: 'hello',
      truncated: false,
    });
    t.equal(page(t, await fetchNow(allowed, `http://a.test:${served.port}/`)).content, 'hello');
  },
);

t.test('every address of a name is checked, and the connection goes to the one checked', async (t) => {
  const served = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('pinned');
  });
  let lookups = 0;
  const answers = {
    'a.test': [{ address: '127.0.0.1', family: 4 as const }],
    'both.test': [
      { address: '127.0.0.1', family: 4 as const },
      { address: '127.0.0.2', family: 4 as const },
    ],
  };
  const { web } = fetcher({
    allowPrivateAddresses: false,
    lookup: async (host) => {
      lookups++;
      return answers[host as keyof typeof answers];
    },
    isPublicAddress: (address) => address === '127.0.0.1',
  });
  failed(t, await fetchNow(web, `http://both.test:${served.port}/`), 'address_not_allowed');
  t.equal(served.connections, 0);
  const fetched = page(t, await fetchNow(web, `http://a.test:${served.port}/`));
  t.equal(fetched.content, 'pinned');
  t.equal(lookups, 2, 'each fetch looked its name up once; the connection did not ask again');
  t.equal(served.requests[0]?.headers.host, `a.test:${served.port}`, 'the host is the name asked for');
});

t.test('the request is a GET of text with no cookie, no authorization and no compression', async (t) => {
  const served = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<p>hi</p>');
  });
  const { web } = fetcher();
  page(t, await fetchNow(web, served.url('/page#fragment')));
  const [seen] = served.requests;
  t.equal(seen?.method, 'GET');
  t.equal(seen?.path, '/page', 'the fragment is not sent');
  t.equal(seen?.headers['user-agent'], 'magid');
  t.equal(seen?.headers['accept-encoding'], 'identity');
  t.match(seen?.headers.accept, /^text\/html/, 'text is preferred');
  t.equal(seen?.headers.cookie, undefined);
  t.equal(seen?.headers.authorization, undefined);
});

t.test('a URL with credentials is refused before any lookup or connection', async (t) => {
  const served = await serve(t, (_request, response) => response.end());
  let lookups = 0;
  const { web } = fetcher({
    lookup: async () => {
      lookups++;
      return loopback();
    },
  });
  failed(t, await fetchNow(web, `http://user:secret@127.0.0.1:${served.port}/`), 'credentials_in_url');
  failed(t, await fetchNow(web, `http://user@a.test:${served.port}/`), 'credentials_in_url');
  t.equal(lookups, 0);
  t.equal(served.connections, 0);
});

t.test('URLs that do not parse, are too long or are not http or https are refused', async (t) => {
  const { web } = fetcher({
    lookup: async () => {
      t.fail('nothing is looked up');
      return [];
    },
  });
  failed(t, await fetchNow(web, 'example.test/no-scheme'), 'invalid_url');
  failed(t, await fetchNow(web, `http://a.test/${'a'.repeat(WEB_FETCH_LIMITS.url_chars)}`), 'invalid_url');
  failed(t, await fetchNow(web, 'ftp://a.test/file'), 'scheme_not_allowed');
  failed(t, await fetchNow(web, 'file:///etc/passwd'), 'scheme_not_allowed');
});

t.test('a name that does not resolve and a server that cannot be reached are told apart', async (t) => {
  const { web } = fetcher({
    lookup: async (host) => {
      if (host === 'nowhere.test') throw new Error('ENOTFOUND');
      return host === 'empty.test' ? [] : loopback();
    },
  });
  failed(t, await fetchNow(web, 'http://nowhere.test/'), 'unresolvable');
  failed(t, await fetchNow(web, 'http://empty.test/'), 'unresolvable');
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  failed(t, await fetchNow(web, `http://a.test:${port}/`), 'unreachable', 'nothing listens on the port');
});

t.test('a connection broken in the middle of the body is unreachable', async (t) => {
  const served = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
    response.write('partial', () => response.socket?.destroy());
  });
  const { web } = fetcher();
  failed(t, await fetchNow(web, served.url('/')), 'unreachable');
});

t.test(
  'an error status is http_status, a 404 and a 500 alike, and so is a redirect without a location',
  async (t) => {
    const served = await serve(t, (request, response) => {
      const status = Number(request.url?.slice(1));
      response.writeHead(status, 'Custom Reason', { 'content-type': 'text/plain' });
      response.end('the server says why');
    });
    const { web } = fetcher();
    for (const status of [404, 500, 302, 304, 418]) {
      failed(t, await fetchNow(web, served.url(`/${status}`)), 'http_status', String(status));
    }
    t.equal(page(t, await fetchNow(web, served.url('/204'))).status, 204, 'any 2xx is a success');
  },
);

t.test('content that is not text is refused and its body is not read', async (t) => {
  const served = await serve(t, (request, response) => {
    if (request.url === '/none') {
      response.end('no type');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    // The body never ends: only the client closing the connection ends the exchange.
    response.write(Buffer.alloc(1024));
  });
  const { web } = fetcher();
  failed(t, await fetchNow(web, served.url('/binary')), 'not_text');
  await served.allClosed();
  t.equal(served.connections, 1, 'the connection the body was coming on was closed');
  failed(t, await fetchNow(web, served.url('/none')), 'not_text', 'no content type');
});

t.test('a compressed body is refused, since it cannot be read as text', async (t) => {
  const served = await serve(t, (request, response) => {
    const encoding = request.url === '/gzip' ? 'gzip' : 'identity';
    response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': encoding });
    response.end('plain');
  });
  const { web } = fetcher();
  failed(t, await fetchNow(web, served.url('/gzip')), 'not_text');
  const plain = await fetchNow(web, served.url('/identity'));
  t.match(plain, { ok: true });
});

t.test('a body over the download limit is cut there and marked truncated', async (t) => {
  const served = await serve(t, (request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end(request.url === '/exact' ? 'x'.repeat(64) : 'y'.repeat(100_000));
  });
  const { web } = fetcher({ downloadBytes: 64 });
  const cut = page(t, await fetchNow(web, served.url('/long')));
  t.equal(cut.content, 'y'.repeat(64));
  t.equal(cut.truncated, true);
  const exact = page(t, await fetchNow(web, served.url('/exact')));
  t.equal(exact.content, 'x'.repeat(64));
  t.equal(exact.truncated, false, 'a body of exactly the limit is whole');
});

t.test('the body is decoded by its charset, invalid bytes replaced', async (t) => {
  const served = await serve(t, (request, response) => {
    if (request.url === '/latin') {
      response.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
      response.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(Buffer.from([0x7b, 0xff, 0x7d]));
  });
  const { web } = fetcher();
  const latin = page(t, await fetchNow(web, served.url('/latin')));
  t.equal(latin.content, 'café');
  t.equal(latin.content_type, 'text/plain; charset=windows-1252');
  t.equal(page(t, await fetchNow(web, served.url('/bad'))).content, '{\uFFFD}');
});

t.test('a seam that throws is an internal error, not a rejection', async (t) => {
  const { web } = fetcher({
    allowPrivateAddresses: false,
    isPublicAddress: () => {
      throw new Error('the seam broke');
    },
  });
  failed(t, await fetchNow(web, 'http://127.0.0.1:9/'), 'internal_error');
});

t.test('no error message repeats the URL or anything the server sent', async (t) => {
  const marker = 'MARKER-7d1c';
  const served = await serve(t, (request, response) => {
    if (request.url?.startsWith('/redirect')) {
      response.writeHead(302, marker, { location: `ftp://${marker}.test/${marker}`, 'x-marker': marker });
      response.end(marker);
      return;
    }
    if (request.url?.startsWith('/binary')) {
      response.writeHead(200, marker, { 'content-type': `application/${marker}` });
      response.end(marker);
      return;
    }
    response.writeHead(500, marker, { 'content-type': 'text/plain', 'x-marker': marker });
    response.end(marker);
  });
  const { web } = fetcher({ lookup: loopback });
  const urls = [
    `http://${marker}.test:${served.port}/redirect?${marker}`,
    `http://${marker}.test:${served.port}/binary?${marker}`,
    `http://${marker}.test:${served.port}/error?${marker}`,
    `http://user:${marker}@${marker}.test/`,
    `gopher://${marker}.test/`,
    `http://${marker}.test/${'a'.repeat(3000)}`,
  ];
  const codes: string[] = [];
  for (const url of urls) {
    const outcome = await fetchNow(web, url);
    if (outcome.ok) {
      t.fail('every fetch here fails');
      continue;
    }
    codes.push(outcome.code);
    t.notMatch(outcome.message, marker, outcome.code);
    t.notMatch(outcome.message, String(served.port), outcome.code);
    t.notMatch(outcome.message, /https?:|\.test/, outcome.code);
  }
  t.same(codes, [
    'scheme_not_allowed',
    'not_text',
    'http_status',
    'credentials_in_url',
    'scheme_not_allowed',
    'invalid_url',
  ]);
});

t.test('the real classifiers are the ones the module exports', async (t) => {
  t.equal(isPublicAddress('127.0.0.1'), false);
  t.equal(isPublicAddress('8.8.8.8'), true);
  t.equal(isPrivateAddress('127.0.0.1'), true);
  t.equal(isPrivateAddress('8.8.8.8'), false);
});
