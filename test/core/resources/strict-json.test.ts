import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import t from 'tap';
import {
  parseStrictJson,
  STRICT_JSON_DEFAULT_MAX_DEPTH,
  StrictJsonError,
  type StrictJsonFailure,
} from '../../../core/resources/strict-json.js';

function failureOf(text: string, maxDepth?: number): StrictJsonFailure | 'accepted' | 'untyped' {
  try {
    parseStrictJson(text, maxDepth === undefined ? {} : { maxDepth });
    return 'accepted';
  } catch (error) {
    return error instanceof StrictJsonError ? error.reason : 'untyped';
  }
}

/** An assertion name that TAP prints on one line whatever the document holds. */
function label(text: string): string {
  return text.replace(/[^\x20-\x7e]|#|\\/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function nestingDepth(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(nestingDepth));
  if (value !== null && typeof value === 'object') {
    return 1 + Math.max(0, ...Object.values(value).map(nestingDepth));
  }
  return 0;
}

/**
 * The differential oracle: whatever JSON.parse refuses, the strict parser refuses with a typed error; whatever
 * the strict parser accepts equals JSON.parse; a document only JSON.parse accepts must break one of the
 * strict rules, and the refusal must say which.
 */
function agreesWithJsonParse(text: string): boolean {
  let expected: unknown;
  let standardAccepts = true;
  try {
    expected = JSON.parse(text);
  } catch {
    standardAccepts = false;
  }
  try {
    const actual = parseStrictJson(text);
    return standardAccepts && isDeepStrictEqual(actual, expected);
  } catch (error) {
    if (!(error instanceof StrictJsonError)) return false;
    if (!standardAccepts) return true;
    switch (error.reason) {
      case 'syntax':
        return false;
      case 'too_deep':
        return nestingDepth(expected) > STRICT_JSON_DEFAULT_MAX_DEPTH;
      case 'lone_surrogate':
        return /\\ud[89a-f][0-9a-f]{2}/.test(JSON.stringify(expected));
      case 'duplicate_member':
        return /[{,]\s*"/.test(text);
    }
  }
}

t.test('accepts RFC 8259 documents exactly as JSON.parse reads them', async (t) => {
  const documents = [
    '0',
    '-0',
    '12.5e-3',
    '1E+2',
    '1e400',
    '-1e400',
    '123456789012345678901234567890',
    'true',
    'false',
    'null',
    '""',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
    '"\\u0041\\u00e9\\u00E9\\ud83d\\ude00"',
    '"\\ud83d\ude00"',
    '"é日本🙂"',
    ' \t\n\r[ ] ',
    '{}',
    '{ "a" : [ 1 , { "b" : null } ] , "c" : "d" }',
    '{"2":1,"1":2,"b":3,"a":4}',
    '[[[[]]]]',
  ];
  for (const text of documents) {
    t.ok(isDeepStrictEqual(parseStrictJson(text), JSON.parse(text)), label(text));
  }
});

t.test('a member named __proto__ is an own property, as with JSON.parse', async (t) => {
  const parsed = parseStrictJson('{"__proto__":{"polluted":true},"a":1}') as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(parsed), Object.prototype);
  t.ok(Object.hasOwn(parsed, '__proto__'));
  t.same(Object.keys(parsed), ['__proto__', 'a']);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
  t.ok(isDeepStrictEqual(parsed, JSON.parse('{"__proto__":{"polluted":true},"a":1}')));
});

t.test('refuses everything outside the RFC 8259 grammar', async (t) => {
  const invalid = [
    '',
    ' ',
    '\ufeff{}',
    '\ufeff1',
    '{"a":1,}',
    '[1,]',
    '[,1]',
    '{,}',
    '01',
    '-01',
    '[00]',
    '1.',
    '.5',
    '+1',
    '-',
    '1e',
    '1e+',
    '0x10',
    "'a'",
    '{a:1}',
    '{"a":1 "b":2}',
    '{"a" 1}',
    '{"a"}',
    '{1:2}',
    '[1 2]',
    '/*c*/1',
    '1 //c',
    '# c\n1',
    'NaN',
    'Infinity',
    '-Infinity',
    'undefined',
    'tru',
    'nul',
    'True',
    '[',
    ']',
    '{',
    '"abc',
    '"\\',
    '"\t"',
    '"\n"',
    '"\u0000"',
    '"\u001f"',
    '"\\x41"',
    '"\\u12"',
    '"\\u12g4"',
    '"\\U0041"',
    '"\\\'"',
    '\u00a01',
    '\u20281',
    '\v1',
    '1 2',
    '{}{}',
    '[]]',
  ];
  for (const text of invalid) {
    t.equal(failureOf(text), 'syntax', label(text));
    t.throws(() => JSON.parse(text), label(text));
  }
});

t.test('refuses duplicate member names at any depth, after escape decoding', async (t) => {
  const duplicated = [
    '{"a":1,"a":2}',
    '{"a":1,"a":1}',
    '{"a":1,"\\u0061":2}',
    '{"\\u0061":1,"a":2}',
    '{"\\/":1,"/":2}',
    '{"é":1,"\\u00e9":2}',
    '{"🙂":1,"\\ud83d\\ude42":2}',
    '{"":1,"":2}',
    '{"__proto__":1,"__proto__":2}',
    '{"a":1,"b":2,"c":3,"b":4}',
    '[{"x":{"b":1,"b":{}}}]',
    '{"a":{"b":[0,{"c":1,"c":2}]}}',
    '{"a":1,"a":2,}',
    // Colons inside strings, raw or escaped, must not stand in for the separator a repeat took away.
    '{"a":1,"a":":"}',
    '{"a":1,"a":"\\u003a"}',
    '{"a:b":1,"a:b":2}',
    '{"\\u003a":1,":":2}',
    '{"a":[":",{"b":1,"b":2}]}',
  ];
  for (const text of duplicated) t.equal(failureOf(text), 'duplicate_member', label(text));
  t.equal(
    failureOf('{"a":{},"b":{"a":1},"c":[{"a":1},{"a":2}]}'),
    'accepted',
    'equal names in sibling objects',
  );
  t.equal(failureOf('{"a":1,"A":2}'), 'accepted', 'names are compared exactly, not case-folded');
  t.equal(failureOf('{"a:b":":","c":"\\u003a"}'), 'accepted', 'colons in strings are only text');
  t.equal(failureOf('{"e\\u0301":1,"\\u00e9":2}'), 'accepted', 'names are not Unicode-normalized');
});

t.test('the error carries a fixed message and the offset of the failure', async (t) => {
  const error = t.throws(() => parseStrictJson('{"secret":1,"secret":2}')) as StrictJsonError;
  t.ok(error instanceof StrictJsonError);
  t.equal(error.reason, 'duplicate_member');
  t.equal(error.offset, 12);
  t.equal(error.message, 'an object repeats a member name');
  t.notMatch(error.message, /secret/);
  const syntax = t.throws(() => parseStrictJson('[1,}')) as StrictJsonError;
  t.equal(syntax.offset, 3);
  t.equal(syntax.message, 'the text is not valid JSON');
});

t.test('refuses a non-string input with a typed error', async (t) => {
  t.equal(failureOf(Buffer.from('{}') as unknown as string), 'syntax');
  t.equal(failureOf(undefined as unknown as string), 'syntax');
});

t.test('bounds the nesting depth', async (t) => {
  const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const objects = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
  t.equal(STRICT_JSON_DEFAULT_MAX_DEPTH, 64);
  t.equal(failureOf(arrays(64)), 'accepted');
  t.equal(failureOf(arrays(65)), 'too_deep');
  t.equal(failureOf(objects(64)), 'accepted');
  t.equal(failureOf(objects(65)), 'too_deep');
  t.equal(failureOf('[{"a":[{"b":[]}]}]', 5), 'accepted');
  t.equal(failureOf('[{"a":[{"b":[]}]}]', 4), 'too_deep');
  t.equal(failureOf('1', 0), 'accepted');
  t.equal(failureOf('[]', 0), 'too_deep');
  t.equal(failureOf('['.repeat(200_000)), 'too_deep', 'no stack overflow on hostile depth');
  t.equal(failureOf('{"a":'.repeat(200_000)), 'too_deep');
});

t.test('refuses strings that decode to a lone surrogate, escaped or raw', async (t) => {
  const lone = [
    '"\\ud800"',
    '"\\udc00"',
    '"\\ude00\\ud83d"',
    '"\\ud83d\\u0041"',
    '"a\\ud83d"',
    '"\ud800"',
    '"\udfff x"',
    '{"\\ud800":1}',
    '[1,"\\udbff"]',
  ];
  for (const text of lone) {
    t.equal(failureOf(text), 'lone_surrogate', label(text));
    t.doesNotThrow(() => JSON.parse(text), 'JSON.parse would have accepted it');
  }
  t.equal(failureOf('"\\ud83d\ude00"'), 'accepted', 'an escaped high and a raw low surrogate form a pair');
  t.equal(failureOf('"\ud83d\\ude00"'), 'accepted');
});

t.test('the differential oracle notices a wrong answer', async (t) => {
  t.ok(agreesWithJsonParse('{"a":[1,2]}'));
  t.ok(agreesWithJsonParse('{"a":1,"a":2}'));
  t.ok(agreesWithJsonParse('"\\ud800"'));
  t.ok(agreesWithJsonParse('[1,]'));
  t.ok(agreesWithJsonParse('['.repeat(65) + ']'.repeat(65)));
});

// ---- property tests ----------------------------------------------------------------------------------

const whitespace = fc.array(fc.stringMatching(/^[ \t\n\r]{0,3}$/), { minLength: 1, maxLength: 8 });

interface Rendering {
  spaces: string[];
  escapeMask: boolean[];
  upperHex: boolean;
}

function hex4(code: number, upper: boolean): string {
  const hex = code.toString(16).padStart(4, '0');
  return `\\u${upper ? hex.toUpperCase() : hex}`;
}

/** Renders a string with each code unit either as itself (escaped where JSON requires) or as `\uXXXX`. */
function renderString(text: string, mask: boolean[], upperHex: boolean, offset = 0): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (mask.length > 0 && mask[(i + offset) % mask.length]) out += hex4(code, upperHex);
    else if (code === 0x22) out += '\\"';
    else if (code === 0x5c) out += '\\\\';
    else if (code < 0x20) out += hex4(code, upperHex);
    else out += text[i];
  }
  return `${out}"`;
}

/** Serializes a JSON value with the given whitespace between every token and varied string escapes. */
function render(value: unknown, style: Rendering): string {
  let turn = 0;
  const gap = () => style.spaces[turn++ % style.spaces.length];
  const walk = (node: unknown): string => {
    if (typeof node === 'string') return renderString(node, style.escapeMask, style.upperHex, turn++);
    if (Array.isArray(node))
      return `[${gap()}${node.map((item) => `${walk(item)}${gap()}`).join(`,${gap()}`)}]`;
    if (node !== null && typeof node === 'object') {
      const members = Object.entries(node).map(
        ([name, item]) =>
          `${renderString(name, style.escapeMask, style.upperHex, turn++)}${gap()}:${gap()}${walk(item)}${gap()}`,
      );
      return `{${gap()}${members.join(`,${gap()}`)}}`;
    }
    return JSON.stringify(node);
  };
  return `${gap()}${walk(value)}${gap()}`;
}

const rendering: fc.Arbitrary<Rendering> = fc.record({
  spaces: whitespace,
  escapeMask: fc.array(fc.boolean(), { maxLength: 5 }),
  upperHex: fc.boolean(),
});

const unicodeJson = fc.jsonValue({ maxDepth: 6, stringUnit: 'grapheme' });

t.test(
  'property: any duplicate-free JSON value, however spaced and escaped, parses as JSON.parse does',
  async (t) => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 6 }), unicodeJson), rendering, (value, style) => {
        const text = render(value, style);
        const parsed = parseStrictJson(text);
        return (
          isDeepStrictEqual(parsed, JSON.parse(text)) &&
          isDeepStrictEqual(parsed, JSON.parse(JSON.stringify(value)))
        );
      }),
      { numRuns: 1500 },
    );
    t.pass('1500 documents agreed');
  },
);

t.test('property: strings with a lone surrogate reject, JSON.parse would accept them', async (t) => {
  const withLone = fc
    .tuple(fc.string(), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string())
    .map(([before, surrogate, after]) => `${before}${String.fromCharCode(surrogate)}${after}`)
    .filter((text) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text));
  fc.assert(
    fc.property(withLone, fc.boolean(), (text, asKey) => {
      const literal = JSON.stringify(text);
      return failureOf(asKey ? `{${literal}:0}` : `[${literal}]`) === 'lone_surrogate';
    }),
    { numRuns: 500 },
  );
  t.pass('500 lone surrogates refused');
});

const tokens = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '"',
  '"a"',
  '"b"',
  '\\',
  '\\u0061',
  '\\ud83d',
  '\\ude00',
  '\\"',
  'u',
  '0',
  '1',
  '9',
  '-',
  '+',
  '.',
  'e',
  'E',
  ' ',
  '\n',
  '\t',
  '\r',
  '\v',
  'a',
  'true',
  'false',
  'null',
  'tru',
  '/',
  '/*',
  'n',
  't',
  '\u0000',
  '\u001f',
  '\ufeff',
  '\u00a0',
  'é',
  '\ud83d',
  '\ude00',
);

t.test('property: random token soup is refused or read exactly as JSON.parse reads it', async (t) => {
  fc.assert(
    fc.property(fc.array(tokens, { maxLength: 30 }), (parts) => agreesWithJsonParse(parts.join(''))),
    { numRuns: 5000 },
  );
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 20 }), (text) => agreesWithJsonParse(text)),
    { numRuns: 2000 },
  );
  t.pass('random texts agreed with JSON.parse');
});

const memberList = fc.array(
  fc.tuple(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })),
  {
    maxLength: 3,
  },
);

t.test(
  'property: an injected duplicate member is always refused, however deep and however escaped',
  async (t) => {
    fc.assert(
      fc.property(
        fc.record({
          before: memberList,
          between: memberList,
          after: memberList,
          name: fc.string({ unit: 'grapheme', maxLength: 8 }),
          first: fc.jsonValue({ maxDepth: 3 }),
          second: fc.jsonValue({ maxDepth: 3 }),
          firstMask: fc.array(fc.boolean(), { maxLength: 4 }),
          secondMask: fc.array(fc.boolean(), { maxLength: 4 }),
          wrappers: fc.array(fc.constantFrom('array', 'object'), { maxLength: 6 }),
          style: rendering,
        }),
        (c) => {
          const members = (list: [string, unknown][]) =>
            list.map(([name, value]) => `${JSON.stringify(name)}:${render(value, c.style)}`);
          const parts = [
            ...members(c.before),
            `${renderString(c.name, c.firstMask, c.style.upperHex)}:${render(c.first, c.style)}`,
            ...members(c.between),
            `${renderString(c.name, c.secondMask, !c.style.upperHex)}:${render(c.second, c.style)}`,
            ...members(c.after),
          ];
          let text = `{${parts.join(',')}}`;
          for (const wrapper of c.wrappers) text = wrapper === 'array' ? `[0,${text},1]` : `{"w":${text}}`;
          return failureOf(text) === 'duplicate_member';
        },
      ),
      { numRuns: 1500 },
    );
    t.pass('1500 injected duplicates refused');
  },
);

const mutation = fc.record({
  kind: fc.constantFrom('delete', 'insert', 'replace', 'repeat', 'swap'),
  at: fc.nat(),
  token: tokens,
  length: fc.integer({ min: 1, max: 6 }),
});

function mutate(text: string, edits: { kind: string; at: number; token: string; length: number }[]): string {
  let out = text;
  for (const edit of edits) {
    const at = out.length === 0 ? 0 : edit.at % out.length;
    const end = Math.min(out.length, at + edit.length);
    if (edit.kind === 'delete') out = out.slice(0, at) + out.slice(end);
    else if (edit.kind === 'insert') out = out.slice(0, at) + edit.token + out.slice(at);
    else if (edit.kind === 'replace') out = out.slice(0, at) + edit.token + out.slice(at + 1);
    else if (edit.kind === 'repeat') out = out.slice(0, end) + out.slice(at, end) + out.slice(end);
    else out = out.slice(at) + out.slice(0, at);
  }
  return out;
}

t.test('property: mutated documents never escape with an untyped error and still agree', async (t) => {
  fc.assert(
    fc.property(
      fc.oneof(fc.jsonValue({ maxDepth: 5 }), unicodeJson),
      rendering,
      fc.array(mutation, { minLength: 1, maxLength: 4 }),
      (value, style, edits) => agreesWithJsonParse(mutate(render(value, style), edits)),
    ),
    { numRuns: 3000 },
  );
  t.pass('3000 mutated documents agreed');
});
