import fc from 'fast-check';
import t from 'tap';
import { fitTextInJson } from '../../../core/agent/fitted-json.js';

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

t.test(
  'a result cut only for its flag still drops a character, so a cut never keeps the whole text',
  async (t) => {
    const text = 'x'.repeat(50);
    const limit = bytes(JSON.stringify(shape(text, false))) - 1;
    const fitted = fitTextInJson(text, limit, shape);
    t.equal(fitted.truncated, true);
    t.equal(fitted.kept, 'x'.repeat(49));
    const emoji = '😀'.repeat(10);
    const cut = fitTextInJson(emoji, bytes(JSON.stringify(shape(emoji, false))) - 1, shape);
    t.equal(cut.kept, '😀'.repeat(9), 'a surrogate pair goes whole');
  },
);

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
            // One more character would not fit, or would be the whole text, which a cut never keeps.
            return (
              fitted.kept + next === text || bytes(JSON.stringify(shape(fitted.kept + next, true))) > limit
            );
          },
        ),
      ),
    );
  },
);
