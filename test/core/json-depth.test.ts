import fc from 'fast-check';
import t from 'tap';
import { exceedsJsonDepth } from '../../core/json-depth.js';

/** The nesting depth of a parsed value, walked without recursion: `{}` and `[]` are one level. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`;

t.test('a text exactly at the bound passes, one level more exceeds it', async (t) => {
  for (const limit of [1, 2, 64]) {
    t.equal(exceedsJsonDepth(nested(limit), limit), false, `${limit} levels under ${limit}`);
    t.equal(exceedsJsonDepth(nested(limit + 1), limit), true, `${limit + 1} levels over ${limit}`);
  }
  const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  t.equal(exceedsJsonDepth(objects(64), 64), false);
  t.equal(exceedsJsonDepth(objects(65), 64), true);
  t.equal(exceedsJsonDepth('1', 0), false, 'a scalar has no depth');
  t.equal(exceedsJsonDepth('[]', 0), true);
});

t.test('brackets inside strings, escaped quotes included, do not count', async (t) => {
  const inString = JSON.stringify({ text: `${'['.repeat(500)}\\"${'{'.repeat(500)}` });
  t.equal(exceedsJsonDepth(inString, 1), false);
  const escapedQuote = `["\\"", ${nested(3)}]`;
  t.equal(exceedsJsonDepth(escapedQuote, 3), true, 'an escaped quote does not end the string');
  t.equal(exceedsJsonDepth(escapedQuote, 4), false);
  const backslashEnd = `["\\\\", ${nested(3)}]`;
  t.equal(exceedsJsonDepth(backslashEnd, 3), true, 'an escaped backslash does end it');
});

t.test('agrees with the depth of the parsed value, for any JSON', async () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 12 }), (value, limit) => {
      const text = JSON.stringify(value);
      return exceedsJsonDepth(text, limit) === depthOf(value) > limit;
    }),
    { numRuns: 500 },
  );
});

t.test('measures depths far past what JSON.stringify can write', async (t) => {
  t.equal(exceedsJsonDepth(nested(1_000_000), 64), true);
  t.equal(exceedsJsonDepth(`"${'['.repeat(1_000_000)}"`, 64), false);
});
