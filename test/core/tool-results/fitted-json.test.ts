import fc from 'fast-check';
import t from 'tap';
import { fitListInJson, fitTextInJson } from '../../../core/tool-results/fitted-json.js';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const shape = (text: string, truncated: boolean) => ({ output: text, truncated });

/** Characters that JSON escapes to two to six bytes each, and ones that take two to four in UTF-8. */
const EXPANDING = ['"', '\\', '\n', '\u0001', '\u001f', 'é', '€', '😀', 'a'];

t.test('a text whose result fits is kept whole', async (t) => {
  const fitted = fitTextInJson('say "hi"\n', 64, shape);
  t.same(fitted, {
    json: '{"output":"say \\"hi\\"\\n","truncated":false}',
    kept: 'say "hi"\n',
    truncated: false,
  });
});

t.test('the bound is the encoded size: at the bound whole, one byte below cut', async (t) => {
  const text = '"'.repeat(100);
  const whole = JSON.stringify(shape(text, false));
  t.equal(fitTextInJson(text, bytes(whole), shape).truncated, false, 'exactly at the bound');
  const cut = fitTextInJson(text, bytes(whole) - 1, shape);
  t.equal(cut.truncated, true, 'one byte short');
  t.ok(bytes(cut.json) <= bytes(whole) - 1);
  t.equal(cut.kept, '"'.repeat(cut.kept.length), 'a beginning of the text');
  t.ok(cut.kept.length >= 98, 'as much as fits');
});

t.test('6,000 control bytes that would encode to 36,000 bytes are cut to fit', async (t) => {
  const text = '\u0001'.repeat(6_000);
  const fitted = fitTextInJson(text, 32_768, shape);
  t.equal(fitted.truncated, true);
  t.ok(bytes(fitted.json) <= 32_768);
  t.ok(bytes(fitted.json) > 32_768 - 6, 'no more room left than one escape');
  t.same(JSON.parse(fitted.json), { output: fitted.kept, truncated: true });
});

t.test('a surrogate pair is never split and a lone surrogate becomes U+FFFD', async (t) => {
  const fitted = fitTextInJson('😀😀😀', bytes(JSON.stringify(shape('😀', true))) + 3, shape);
  t.equal(fitted.kept, '😀');
  t.equal(fitTextInJson('a\ud800b', 64, shape).kept, 'a\ufffdb');
});

t.test('numbers that grow with the kept text are accounted for', async (t) => {
  const withOffset = (text: string, truncated: boolean) => ({
    content: text,
    next_offset: truncated ? 1_000_000 + bytes(text) * 1_000_000 : null,
  });
  const fitted = fitTextInJson('x'.repeat(500), 200, withOffset);
  t.ok(bytes(fitted.json) <= 200);
  t.equal(JSON.parse(fitted.json).next_offset, 1_000_000 + fitted.kept.length * 1_000_000);
});

t.test('a bound the empty result cannot meet is a RangeError', async (t) => {
  t.throws(() => fitTextInJson('abc', 10, shape), RangeError);
});

t.test(
  'for any text and bound, the result fits, parses and keeps the longest fitting beginning',
  async (t) => {
    t.doesNotThrow(() =>
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom(...EXPANDING), { maxLength: 400 }).map((parts) => parts.join('')),
          fc.integer({ min: 32, max: 2_000 }),
          (text, limit) => {
            const fitted = fitTextInJson(text, limit, shape);
            if (bytes(fitted.json) > limit) return false;
            const parsed = JSON.parse(fitted.json) as { output: string; truncated: boolean };
            if (parsed.output !== fitted.kept || parsed.truncated !== fitted.truncated) return false;
            if (!text.startsWith(fitted.kept)) return false;
            if (!fitted.truncated) return fitted.kept === text;
            const next = [...text.slice(fitted.kept.length)][0]!;
            // A cut keeps less than the whole, whatever its own members save.
            if (fitted.kept + next === text) return true;
            return bytes(JSON.stringify(shape(fitted.kept + next, true))) > limit;
          },
        ),
      ),
    );
  },
);

t.test('a cut result keeps less than the whole, even where its own members shrink when cut', async (t) => {
  // `true` is one byte shorter than `false`: the whole text with `truncated:true` would fit exactly.
  const text = 'abc😀';
  const limit = bytes(JSON.stringify(shape(text, false))) - 1;
  const fitted = fitTextInJson(text, limit, shape);
  t.same(fitted, { json: JSON.stringify(shape('abc', true)), kept: 'abc', truncated: true });
  const list = fitListInJson(['a', 'b'], bytes(JSON.stringify(listShape(['a', 'b'], false))) - 1, listShape);
  t.same(list, { json: JSON.stringify(listShape(['a'], true)), kept: 1, truncated: true });
});

const listShape = (items: readonly string[], truncated: boolean) => ({
  items,
  truncated,
  next: truncated ? items.length : null,
});

t.test('a list whose result fits is kept whole; at the bound whole, one byte below cut', async (t) => {
  const items = ['say "hi"\n', '\u0001'.repeat(10), 'é😀'];
  const whole = JSON.stringify(listShape(items, false));
  t.same(fitListInJson(items, bytes(whole), listShape), { json: whole, kept: 3, truncated: false });
  const cut = fitListInJson(items, bytes(whole) - 1, listShape);
  t.same(cut, { json: JSON.stringify(listShape(items.slice(0, 2), true)), kept: 2, truncated: true });
  t.throws(() => fitListInJson(items, 10, listShape), RangeError, 'not even an empty list fits');
  t.throws(
    () => fitListInJson([], 41, listShape),
    RangeError,
    'nor an empty list whole, with nothing to cut',
  );
  t.throws(() => fitTextInJson('', 30, shape), RangeError, 'nor an empty text');
});

t.test('numbers that grow with the items kept are accounted for', async (t) => {
  const grows = (items: readonly string[], truncated: boolean) => ({
    items,
    next: truncated ? 10 ** (items.length + 1) : null,
  });
  const items = Array.from({ length: 40 }, () => 'x');
  const fitted = fitListInJson(items, 120, grows);
  t.ok(bytes(fitted.json) <= 120);
  t.same(JSON.parse(fitted.json), grows(items.slice(0, fitted.kept), true));
  t.ok(bytes(JSON.stringify(grows(items.slice(0, fitted.kept + 1), true))) > 120, 'as many as fit');
});

t.test('for any items and bound, the list fits, parses and keeps the most items that fit', async (t) => {
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.constantFrom(...EXPANDING), { maxLength: 20 }).map((parts) => parts.join('')),
          { maxLength: 60 },
        ),
        // From the size of the whole result of an empty list.
        fc.integer({ min: 42, max: 2_000 }),
        (items, limit) => {
          const fitted = fitListInJson(items, limit, listShape);
          if (bytes(fitted.json) > limit) return false;
          const kept = items.slice(0, fitted.kept);
          if (fitted.json !== JSON.stringify(listShape(kept, fitted.truncated))) return false;
          if (!fitted.truncated) return fitted.kept === items.length;
          if (fitted.kept >= items.length) return false;
          if (fitted.kept === items.length - 1) return true;
          return bytes(JSON.stringify(listShape(items.slice(0, fitted.kept + 1), true))) > limit;
        },
      ),
    ),
  );
});
