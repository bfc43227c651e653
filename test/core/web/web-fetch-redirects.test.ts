import t, { type Test } from 'tap';
import { failed, fetcher, fetchNow, page, serve } from './web-fixture.js';

const STATUSES = [301, 302, 303, 307, 308];

/** `/hop/<n>` redirects to `/hop/<n - 1>`, through every redirect status; `/hop/0` answers. */
async function chain(t: Test) {
  return serve(t, (request, response) => {
    const left = Number(request.url?.split('/')[2]);
    if (left === 0) {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('arrived');
      return;
    }
    response.writeHead(STATUSES[left % STATUSES.length]!, { location: `/hop/${left - 1}` });
    response.end('moved');
  });
}

t.test('a chain of exactly maxRedirects is followed and one more is refused', async (t) => {
  const served = await chain(t);
  const { web } = fetcher({ maxRedirects: 3 });
  const fetched = page(t, await fetchNow(web, served.url('/hop/3')));
  t.equal(fetched.url, served.url('/hop/0'), 'the output names the final URL');
  t.equal(fetched.content, 'arrived');
  t.equal(served.requests.length, 4);
  served.requests.length = 0;
  failed(t, await fetchNow(web, served.url('/hop/4')), 'too_many_redirects');
  t.same(
    served.requests.map(({ path }) => path),
    ['/hop/4', '/hop/3', '/hop/2', '/hop/1'],
    'the redirect past the limit was not followed',
  );
});

t.test('five redirects are followed by default, through every redirect status', async (t) => {
  const served = await chain(t);
  const { web } = fetcher();
  t.equal(page(t, await fetchNow(web, served.url('/hop/5'))).content, 'arrived');
  failed(t, await fetchNow(web, served.url('/hop/6')), 'too_many_redirects');
});

t.test('a redirect from an allowed host to a refused address is refused', async (t) => {
  const served = await serve(t, (request, response) => {
    const to =
      request.url === '/to-name' ? `http://b.test:${served.port}/` : `http://127.0.0.2:${served.port}/`;
    response.writeHead(302, { location: to });
    response.end();
  });
  const lookups: string[] = [];
  const answers: Record<string, string> = { 'a.test': '127.0.0.1', 'b.test': '127.0.0.2' };
  const { web } = fetcher({
    allowPrivateAddresses: false,
    lookup: async (host) => {
      lookups.push(host);
      return [{ address: answers[host]!, family: 4 }];
    },
    isPublicAddress: (address) => address === '127.0.0.1',
  });
  failed(t, await fetchNow(web, `http://a.test:${served.port}/to-name`), 'address_not_allowed', 'to a name');
  t.same(lookups, ['a.test', 'b.test'], 'each hop resolved its own host');
  failed(
    t,
    await fetchNow(web, `http://a.test:${served.port}/to-literal`),
    'address_not_allowed',
    'to a literal',
  );
  t.equal(served.requests.length, 2, 'only the allowed host was asked');
  t.ok(
    served.requests.every(({ headers }) => headers.host === `a.test:${served.port}`),
    'no request reached the refused address',
  );
});

t.test('a redirect is checked again from the start: scheme, credentials, URL', async (t) => {
  const targets: Record<string, string> = {
    '/file': 'file:///etc/passwd',
    '/ftp': 'ftp://127.0.0.1/file',
    '/credentials': 'http://user:secret@127.0.0.1/',
    '/broken': 'http://[::1',
    '/long': `/${'a'.repeat(3000)}`,
  };
  const served = await serve(t, (request, response) => {
    response.writeHead(301, { location: targets[request.url ?? '']! });
    response.end();
  });
  const { web } = fetcher();
  failed(t, await fetchNow(web, served.url('/file')), 'scheme_not_allowed', 'to file:');
  failed(t, await fetchNow(web, served.url('/ftp')), 'scheme_not_allowed', 'to ftp:');
  failed(t, await fetchNow(web, served.url('/credentials')), 'credentials_in_url');
  failed(t, await fetchNow(web, served.url('/broken')), 'invalid_url');
  failed(t, await fetchNow(web, served.url('/long')), 'invalid_url', 'a target over the length limit');
  t.equal(served.requests.length, 5, 'no refused target was requested');
});

t.test('no cookie is sent after a set-cookie on a redirect, and never an authorization', async (t) => {
  const served = await serve(t, (request, response) => {
    if (request.url === '/login') {
      response.writeHead(302, {
        location: '/next',
        'set-cookie': ['session=secret; Path=/', 'other=1'],
        'www-authenticate': 'Basic realm="x"',
      });
      response.end();
      return;
    }
    if (request.url === '/next') {
      response.writeHead(307, { location: '/last', 'set-cookie': 'again=2' });
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('done');
  });
  const { web } = fetcher();
  t.equal(page(t, await fetchNow(web, served.url('/login'))).content, 'done');
  t.equal(page(t, await fetchNow(web, served.url('/login'))).content, 'done', 'nor on a later fetch');
  t.same(
    served.requests.map(({ path }) => path),
    ['/login', '/next', '/last', '/login', '/next', '/last'],
  );
  for (const { path, headers } of served.requests) {
    t.equal(headers.cookie, undefined, `no cookie on ${path}`);
    t.equal(headers.authorization, undefined, `no authorization on ${path}`);
  }
});
