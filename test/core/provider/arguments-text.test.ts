import fc from 'fast-check';
import t from 'tap';
import { ArgumentsText } from '../../../core/provider/arguments-text.js';

/** What completeness means: the text, trimmed at its end, parses and ends an object or an array. */
function wholeValue(text: string): boolean {
  const trimmed = text.trimEnd();
  const last = trimmed[trimmed.length - 1];
  if (last !== '}' && last !== ']') return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

const PIECES = ['{', '}', '[', ']', '"', '\\', '\\"', 'a', '1', ' ', '\n', ',', ':', '"k":', '\u00a0', 'é'];

t.test('complete exactly when the text so far is a whole object or array', async (t) => {
  for (const [text, expected] of [
    ['', false],
    ['{}', true],
    [' \n{"a":[1,{"b":"}"}]} \t', true],
    ['[1,2]', true],
    ['{"a":"\\"}"', false],
    ['{"a":"\\"}"}', true],
    ['{"a":1}}', false],
    ['{"a":1}{}', false],
    ['{]', false],
    ['"text"', false],
    ['1', false],
    ['{"a":1}\u00a0', true],
  ] as const) {
    const whole = new ArgumentsText();
    whole.append(text);
    t.equal(whole.complete, expected, JSON.stringify(text));
  }
});

t.test('for any fragments, after each one, the same answer as parsing the whole text', async (t) => {
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.constantFrom(...PIECES), { maxLength: 4 }).map((parts) => parts.join('')),
          { maxLength: 40 },
        ),
        (fragments) => {
          const text = new ArgumentsText();
          let so = '';
          for (const fragment of fragments) {
            text.append(fragment);
            so += fragment;
            if (text.text !== so || text.complete !== wholeValue(so)) return false;
          }
          return true;
        },
      ),
      { numRuns: 2_000 },
    ),
  );
  t.doesNotThrow(
    () =>
      fc.assert(
        fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 7 }), (value, size) => {
          const json = JSON.stringify(value);
          const text = new ArgumentsText();
          for (let at = 0; at < json.length; at += size) text.append(json.slice(at, at + size));
          return text.complete === wholeValue(json);
        }),
      ),
    'real JSON values in fragments of any size',
  );
});

t.test('replace starts over from the new text', async (t) => {
  const text = new ArgumentsText();
  text.append('{}x');
  t.equal(text.complete, false);
  text.replace('{"a":1}');
  t.same([text.text, text.complete], ['{"a":1}', true]);
});
