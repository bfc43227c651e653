import t, { type Test } from 'tap';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import { WEB_FETCH_LIMITS } from '../../../core/web/web-fetch.js';
import { type FetchedPage, fetcher, fetchNow, page, type Served, serve } from './web-fixture.js';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Characters JSON escapes into two to six bytes, and ones UTF-8 takes two to four bytes for. */
const EXPANDING = ['"', '\\', '\n', '\r', '\t', '\u0001', '\u001f', '\u0000', 'é', '€', '😀', 'a'];

const CONTENT_TYPE = 'text/plain; charset=utf-8';

/** A server answering each path with the text set for it. */
async function pages(t: Test): Promise<{ served: Served; texts: Map<string, string> }> {
  const texts = new Map<string, string>();
  const served = await serve(t, (request, response) => {
    response.writeHead(200, { 'content-type': CONTENT_TYPE });
    response.end(texts.get(request.url ?? '') ?? '');
  });
  return { served, texts };
}

/** The result of a whole page at `url`, as the fetcher encodes it. */
function wholeResult(url: string, content: string): string {
  return JSON.stringify({ url, status: 200, content_type: CONTENT_TYPE, content, truncated: false });
}

/** A page of `unit` whose whole result is exactly `limit` bytes: padding first, so any cut falls in units. */
function pageAtBound(url: string, unit: string, limit: number): string {
  const room = limit - bytes(wholeResult(url, ''));
  const size = bytes(JSON.stringify(unit)) - 2;
  return 'a'.repeat(room % size) + unit.repeat(Math.floor(room / size));
}

/** The output fits `limit`, is cut, keeps a beginning of `text`, and the next character would not fit (or end it). */
function cutToFit(t: Test, output: string, text: string, limit: number, name: string): FetchedPage {
  const fetched = JSON.parse(output) as FetchedPage;
  t.ok(bytes(output) <= limit, `${name}: ${bytes(output)} bytes fit ${limit}`);
  t.equal(fetched.truncated, true, `${name}: truncated`);
  t.ok(text.startsWith(fetched.content), `${name}: a beginning of the page`);
  const next = [...text.slice(fetched.content.length)][0];
  if (next !== undefined) {
    // A cut never keeps the whole page, even when only the flag made the whole one not fit.
    const whole = fetched.content + next === text;
    t.ok(
      whole || bytes(JSON.stringify({ ...fetched, content: fetched.content + next })) > limit,
      `${name}: the longest`,
    );
  }
  return fetched;
}

t.test('the result is bounded well within what a built-in call may give the model', async (t) => {
  t.ok(WEB_FETCH_LIMITS.output_bytes <= BUILTIN_LIMITS.output_bytes);
});

t.test('a page whose encoded result is exactly the bound is whole, one past it is cut to fit', async (t) => {
  const { served, texts } = await pages(t);
  const { web } = fetcher();
  const limit = WEB_FETCH_LIMITS.output_bytes;
  for (const [index, unit] of EXPANDING.entries()) {
    const name = JSON.stringify(unit);
    const at = `/${index}/at`;
    const text = pageAtBound(served.url(at), unit, limit);
    texts.set(at, text);
    const whole = await fetchNow(web, served.url(at));
    t.equal(whole.ok && bytes(whole.output), limit, `${name}: exactly the bound`);
    t.same(page(t, whole), {
      url: served.url(at),
      status: 200,
      content_type: CONTENT_TYPE,
      content: text,
      truncated: false,
    });

    for (const [extra, label] of [
      ['a', 'one byte past'],
      [unit, 'one character past'],
    ] as const) {
      const path = `/${index}/past-${label.split(' ')[1]}`;
      const longer = pageAtBound(served.url(path), unit, limit) + extra;
      t.equal(bytes(wholeResult(served.url(path), longer)), limit + bytes(JSON.stringify(extra)) - 2);
      texts.set(path, longer);
      const outcome = await fetchNow(web, served.url(path));
      if (!outcome.ok) {
        t.fail(`${name} ${label}: ${outcome.code}`);
        continue;
      }
      cutToFit(t, outcome.output, longer, limit, `${name} ${label}`);
    }
  }
});

t.test('pages that multiply under escaping are cut to the bound, never failed', async (t) => {
  const { served, texts } = await pages(t);
  const { web } = fetcher();
  const limit = WEB_FETCH_LIMITS.output_bytes;
  const cases: Array<[string, string]> = [
    ['20,000 quotes', '"'.repeat(20_000)],
    ['20,000 backslashes', '\\'.repeat(20_000)],
    ['20,000 newlines', '\n'.repeat(20_000)],
    ['6,000 control bytes', '\u0001'.repeat(6_000)],
    ['10,000 euro signs', '€'.repeat(10_000)],
    ['a mix of all of them', EXPANDING.join('').repeat(2_000)],
  ];
  for (const [index, [name, text]] of cases.entries()) {
    texts.set(`/${index}`, text);
    const outcome = await fetchNow(web, served.url(`/${index}`));
    if (outcome.ok) cutToFit(t, outcome.output, text, limit, name);
    else t.fail(`${name}: ${outcome.code}`);
  }
});

t.test('a smaller bound cuts between characters, never inside one', async (t) => {
  const { served, texts } = await pages(t);
  texts.set('/', 'abcdefgh€ijk');
  const frame = bytes(wholeResult(served.url('/'), '')) - 1;
  for (const [room, content, truncated] of [
    [8, 'abcdefgh', true],
    [9, 'abcdefgh', true],
    [10, 'abcdefgh', true],
    [11, 'abcdefgh€', true],
    [13, 'abcdefgh€ij', true],
    [15, 'abcdefgh€ijk', false],
  ] as const) {
    const { web } = fetcher({ outputBytes: frame + room });
    t.same(
      page(t, await fetchNow(web, served.url('/'))),
      { url: served.url('/'), status: 200, content_type: CONTENT_TYPE, content, truncated },
      `${room} bytes of room`,
    );
  }
});

t.test('a body cut at the download limit is truncated even when its text fits the result', async (t) => {
  const { served, texts } = await pages(t);
  texts.set('/', '"'.repeat(100));
  const { web } = fetcher({ downloadBytes: 64 });
  const fetched = page(t, await fetchNow(web, served.url('/')));
  t.equal(fetched.content, '"'.repeat(64));
  t.equal(fetched.truncated, true);
});
