import t from 'tap';
import { checkUrl, type ResolvedAddress, resolveTarget } from '../../../core/web/fetch-target.js';
import { WEB_FETCH_LIMITS } from '../../../core/web/web-fetch-limits.js';

const anyAddress = () => true;

t.test('a URL must parse, fit the length limit, be http or https and carry no credentials', async (t) => {
  const room = WEB_FETCH_LIMITS.url_chars - 'http://a.test/'.length;
  t.equal(checkUrl('not a url'), 'invalid_url');
  t.equal(checkUrl('/relative/path'), 'invalid_url');
  t.equal(checkUrl('http://[::1'), 'invalid_url');
  t.equal(checkUrl(`http://a.test/${'a'.repeat(room + 1)}`), 'invalid_url', 'one character too long');
  t.equal(checkUrl(`http://a.test/${'<'.repeat(room)}`), 'invalid_url', 'too long once encoded');
  t.equal(checkUrl(`http://a.test/${'a'.repeat(room)}`)?.toString().length, WEB_FETCH_LIMITS.url_chars);
  for (const url of [
    'ftp://a.test/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'ws://a.test/',
  ]) {
    t.equal(checkUrl(url), 'scheme_not_allowed', url);
  }
  t.equal(checkUrl('http://user@a.test/'), 'credentials_in_url');
  t.equal(checkUrl('https://user:secret@a.test/'), 'credentials_in_url');
  t.equal(checkUrl('http://:secret@a.test/'), 'credentials_in_url');
  const url = checkUrl('HTTPS://A.Test/x?y=1#z');
  t.equal(url instanceof URL ? url.href : url, 'https://a.test/x?y=1#z');
});

t.test('a name is resolved once, all its addresses, and refused unless every one is allowed', async (t) => {
  const asked: string[] = [];
  const answers: Record<string, ResolvedAddress[]> = {
    'a.test': [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ],
    'mixed.test': [
      { address: '127.0.0.1', family: 4 },
      { address: '127.0.0.2', family: 4 },
    ],
    'none.test': [],
    'odd.test': [{ address: 'not-an-ip', family: 4 }],
  };
  const lookup = async (host: string) => {
    asked.push(host);
    const found = answers[host];
    if (found === undefined) throw new Error('ENOTFOUND');
    return found;
  };
  const allowed = (address: string) => address !== '127.0.0.2';
  const target = await resolveTarget(new URL('http://a.test:8080/'), { lookup, isAllowedAddress: allowed });
  t.match(target, { host: 'a.test', addresses: answers['a.test'] });
  t.same(asked, ['a.test']);
  t.match(await resolveTarget(new URL('http://mixed.test/'), { lookup, isAllowedAddress: allowed }), {
    code: 'address_not_allowed',
  });
  t.match(await resolveTarget(new URL('http://mixed.test/'), { lookup, isAllowedAddress: anyAddress }), {
    addresses: answers['mixed.test'],
  });
  for (const host of ['none.test', 'odd.test', 'missing.test']) {
    t.match(await resolveTarget(new URL(`http://${host}/`), { lookup, isAllowedAddress: anyAddress }), {
      code: 'unresolvable',
    });
  }
});

t.test('a literal IP host is not resolved and is checked the same way', async (t) => {
  const lookup = async () => {
    t.fail('a literal address is not looked up');
    return [];
  };
  const refuse = (address: string) => address === '8.8.8.8';
  t.match(await resolveTarget(new URL('http://127.0.0.1/'), { lookup, isAllowedAddress: refuse }), {
    code: 'address_not_allowed',
  });
  t.match(await resolveTarget(new URL('http://[::1]/'), { lookup, isAllowedAddress: refuse }), {
    code: 'address_not_allowed',
  });
  t.match(await resolveTarget(new URL('http://[::1]:81/'), { lookup, isAllowedAddress: anyAddress }), {
    host: '::1',
    addresses: [{ address: '::1', family: 6 }],
  });
  t.match(await resolveTarget(new URL('http://8.8.8.8/'), { lookup, isAllowedAddress: refuse }), {
    host: '8.8.8.8',
    addresses: [{ address: '8.8.8.8', family: 4 }],
  });
});
