import t from 'tap';
import type { ResolvedAddress } from '../../../core/web/fetch-target.js';
import { failed, fetcher, fetchNow, page, serve } from './web-fixture.js';

/** Every way a URL may name this machine's loopback, its unspecified address or an IPv6 form carrying 127.0.0.1. */
const LOOPBACK_SPELLINGS = [
  '127.0.0.1',
  '127.1',
  '127.0.0.1.',
  '0x7f.0.0.1',
  '0x7f000001',
  '0177.0.0.1',
  '017700000001',
  '2130706433',
  '127.0x0.1',
  '0.0.0.0',
  '0',
  '[::]',
  '[::1]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::ffff:0:127.0.0.1]',
  '[::127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::]',
  'localhost',
];

/** Of those, the ones that stay refused with private addresses allowed: none is loopback itself. */
const NEVER_ALLOWED = [
  '0.0.0.0',
  '0',
  '[::]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::ffff:0:127.0.0.1]',
  '[::127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b:1::7f00:1]',
  '[2002:7f00:1::]',
];

/** What a resolver might answer for a name pointing at this machine. */
const LOOPBACK_ANSWERS: ResolvedAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '127.255.255.254', family: 4 },
  { address: '0.0.0.0', family: 4 },
  { address: '::1', family: 6 },
  { address: '::', family: 6 },
  { address: '::ffff:127.0.0.1', family: 6 },
  { address: '::127.0.0.1', family: 6 },
  { address: '64:ff9b::7f00:1', family: 6 },
];

t.test('every spelling of loopback in a URL is refused before anything connects', async (t) => {
  const served = await serve(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('loopback');
  });
  const { web } = fetcher({ allowPrivateAddresses: false });
  for (const host of LOOPBACK_SPELLINGS) {
    failed(t, await fetchNow(web, `http://${host}:${served.port}/`), 'address_not_allowed', host);
  }
  t.equal(served.connections, 0, 'no refused fetch connected');
});

t.test('a name that resolves to any loopback form is refused before anything connects', async (t) => {
  const served = await serve(t, (_request, response) => response.end());
  for (const answer of LOOPBACK_ANSWERS) {
    const { web } = fetcher({ allowPrivateAddresses: false, lookup: async () => [answer] });
    failed(t, await fetchNow(web, `http://a.test:${served.port}/`), 'address_not_allowed', answer.address);
  }
  const { web } = fetcher({
    allowPrivateAddresses: false,
    lookup: async () => [{ address: '8.8.8.8', family: 4 }, ...LOOPBACK_ANSWERS.slice(0, 1)],
  });
  failed(
    t,
    await fetchNow(web, `http://a.test:${served.port}/`),
    'address_not_allowed',
    'a public one beside',
  );
  t.equal(served.connections, 0);
});

t.test(
  'with private addresses allowed, loopback is fetched but the unspecified and embedding forms are not',
  async (t) => {
    const served = await serve(t, (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('loopback');
    });
    const { web } = fetcher({ allowPrivateAddresses: true });
    for (const host of NEVER_ALLOWED) {
      failed(t, await fetchNow(web, `http://${host}:${served.port}/`), 'address_not_allowed', host);
    }
    t.equal(served.connections, 0, 'none of them connected');
    for (const host of ['127.1', '0x7f.0.0.1', '2130706433', '127.0.0.1.']) {
      t.equal(page(t, await fetchNow(web, `http://${host}:${served.port}/`)).content, 'loopback', host);
    }
  },
);
