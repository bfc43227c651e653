import fc from 'fast-check';
import t from 'tap';
import { WireError } from '../../../core/errors.js';
import { parseStrictJson } from '../../../core/resources/strict-json.js';
import {
  contractJsonBytes,
  type ObjectSchema,
  parseToolContract,
  SCHEMA_MAX_PROPERTIES,
  type SchemaRefusal,
  schemaRefusalMessage,
  TOOL_CONTRACT_REFUSALS,
  validateAgainstSchema,
} from '../../../core/resources/tool-contract.js';

const EMPTY_SCHEMA = { type: 'object', additionalProperties: false };

function contractWith(members: Record<string, unknown>): string {
  return JSON.stringify({ input_schema: EMPTY_SCHEMA, output_schema: EMPTY_SCHEMA, ...members });
}

function withInputSchema(schema: unknown): string {
  return contractWith({ input_schema: schema });
}

function withProperty(property: unknown): string {
  return withInputSchema({ type: 'object', properties: { p: property }, additionalProperties: false });
}

/** The refusal a source earns, as the client would see it; 'accepted' when none. */
function refusalOf(source: Buffer | string): { code: string; message: string } | 'accepted' {
  try {
    parseToolContract(source);
    return 'accepted';
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    return error.toJSON();
  }
}

function invalid(message: string) {
  return { code: 'invalid_payload', message };
}

function schemaInvalid(rule: SchemaRefusal, member: 'input_schema' | 'output_schema' = 'input_schema') {
  return invalid(schemaRefusalMessage(member, rule));
}

t.test('a minimal contract gets empty properties, no required members and the default timeout', async (t) => {
  const contract = parseToolContract(contractWith({}));
  const normalized = { type: 'object', properties: {}, required: [], additionalProperties: false };
  t.strictSame(contract, { input_schema: normalized, output_schema: normalized, timeout_ms: 120_000 });
});

t.test('a full contract is normalized, frozen, and read from bytes or text alike', async (t) => {
  const source = JSON.stringify({
    timeout_ms: 30_000,
    output_schema: { additionalProperties: false, type: 'object', properties: { ok: { type: 'boolean' } } },
    input_schema: {
      required: ['path', 'count'],
      properties: {
        path: { maxLength: 4096, type: 'string' },
        count: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        dryRun: { type: 'boolean' },
      },
      additionalProperties: false,
      type: 'object',
    },
  });
  const expected = {
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', maxLength: 4096 },
        count: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
        dryRun: { type: 'boolean' },
      },
      required: ['path', 'count'],
      additionalProperties: false,
    },
    output_schema: {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: [],
      additionalProperties: false,
    },
    timeout_ms: 30_000,
  };
  const fromText = parseToolContract(source);
  t.strictSame(fromText, expected);
  t.strictSame(parseToolContract(Buffer.from(source)), expected);
  t.equal(
    JSON.stringify(fromText.input_schema),
    JSON.stringify(expected.input_schema),
    'canonical member order',
  );
  t.ok(Object.isFrozen(fromText));
  t.ok(Object.isFrozen(fromText.input_schema));
  t.ok(Object.isFrozen(fromText.input_schema.properties));
  t.ok(Object.isFrozen(fromText.input_schema.properties.path));
  t.ok(Object.isFrozen(fromText.input_schema.required));
});

t.test('a contract that is not exact UTF-8 is refused', async (t) => {
  const notUtf8 = invalid(TOOL_CONTRACT_REFUSALS.not_utf8);
  const valid = Buffer.from(contractWith({}));
  t.same(refusalOf(Buffer.concat([valid.subarray(0, 10), Buffer.from([0xff]), valid.subarray(10)])), notUtf8);
  t.same(refusalOf(Buffer.from([0x7b, 0xc0, 0xaf, 0x7d])), notUtf8, 'overlong');
  t.same(refusalOf(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])), notUtf8, 'encoded surrogate');
  t.same(refusalOf(Buffer.from([0x22, 0xe6, 0x97])), notUtf8, 'truncated sequence');
  t.same(refusalOf('{"input_schema":"\ud800"}'), notUtf8, 'text with a lone surrogate');
});

t.test('a byte order mark, comments, trailing commas and other non-JSON are refused', async (t) => {
  const syntax = invalid(TOOL_CONTRACT_REFUSALS.syntax);
  const valid = contractWith({});
  t.same(refusalOf(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid)])), syntax, 'BOM');
  t.same(refusalOf(''), syntax);
  t.same(refusalOf(`${valid.slice(0, -1)},}`), syntax);
  t.same(refusalOf(`/* c */${valid}`), syntax);
  t.same(refusalOf(contractWith({ timeout_ms: 5 }).replace('5', '05')), syntax);
  t.same(refusalOf('{"input_schema":"\\ud800"}'), syntax, 'an escaped lone surrogate');
  t.same(refusalOf(`${'['.repeat(100)}${']'.repeat(100)}`), invalid(TOOL_CONTRACT_REFUSALS.too_deep));
});

t.test('duplicate member names are refused at every depth, escaped or not', async (t) => {
  const duplicate = invalid(TOOL_CONTRACT_REFUSALS.duplicate_member);
  const valid = contractWith({});
  t.same(refusalOf(`{"timeout_ms":1000,${valid.slice(1, -1)},"timeout_ms":1000}`), duplicate);
  t.same(refusalOf(`{"input_schema":{},${valid.slice(1)}`), duplicate);
  t.same(refusalOf('{"input_schema":{"type":"object","\\u0074ype":"object"}}'), duplicate);
  const property = '{"type":"boolean"}';
  const properties = `{"a":${property},"a":${property}}`;
  t.same(
    refusalOf(
      `{"input_schema":{"type":"object","properties":${properties},"additionalProperties":false},` +
        `"output_schema":${JSON.stringify(EMPTY_SCHEMA)}}`,
    ),
    duplicate,
  );
  t.same(
    refusalOf(
      withProperty({ type: 'string', maxLength: 5 }).replace('"maxLength":5', '"maxLength":5,"maxLength":5'),
    ),
    duplicate,
  );
});

t.test(
  'the contract is an object of exactly input_schema, output_schema and optional timeout_ms',
  async (t) => {
    for (const text of ['[]', '1', 'null', '"x"', 'true']) {
      t.same(refusalOf(text), invalid(TOOL_CONTRACT_REFUSALS.not_object), text);
    }
    const unknown = invalid(TOOL_CONTRACT_REFUSALS.unknown_member);
    t.same(refusalOf(contractWith({ name: 'x' })), unknown);
    t.same(refusalOf(contractWith({ description: 'x' })), unknown);
    t.same(refusalOf(contractWith({ contract: {} })), unknown);
    t.same(refusalOf(contractWith({ inputSchema: EMPTY_SCHEMA })), unknown);
    const missing = invalid(TOOL_CONTRACT_REFUSALS.missing_schema);
    t.same(refusalOf('{}'), missing);
    t.same(refusalOf(JSON.stringify({ input_schema: EMPTY_SCHEMA })), missing);
    t.same(refusalOf(JSON.stringify({ output_schema: EMPTY_SCHEMA, timeout_ms: 1000 })), missing);
  },
);

t.test('timeout_ms is an integer from 1,000 to 600,000, judged by value', async (t) => {
  const accepted: [string, number][] = [
    ['1000', 1000],
    ['600000', 600_000],
    ['1000.0', 1000],
    ['1e3', 1000],
    ['6E5', 600_000],
    ['120000', 120_000],
  ];
  for (const [literal, value] of accepted) {
    const source = contractWith({ timeout_ms: 0 }).replace('"timeout_ms":0', `"timeout_ms":${literal}`);
    t.equal(parseToolContract(source).timeout_ms, value, literal);
  }
  const refused = ['null', '999', '600001', '1000.5', '"120000"', 'true', '[]', '{}', '-1000', '0', '1e400'];
  for (const literal of refused) {
    const source = contractWith({ timeout_ms: 0 }).replace('"timeout_ms":0', `"timeout_ms":${literal}`);
    t.same(refusalOf(source), invalid(TOOL_CONTRACT_REFUSALS.timeout), literal);
  }
});

t.test('the root of each schema is exactly an object schema without additional properties', async (t) => {
  for (const member of ['input_schema', 'output_schema'] as const) {
    const refuse = (schema: unknown) => refusalOf(contractWith({ [member]: schema }));
    for (const schema of [null, [], 'object', 1, true]) {
      t.same(refuse(schema), schemaInvalid('not_object', member));
    }
    for (const keyword of [
      '$schema',
      'description',
      'title',
      'patternProperties',
      'items',
      '$defs',
      'minProperties',
    ]) {
      t.same(refuse({ ...EMPTY_SCHEMA, [keyword]: 'x' }), schemaInvalid('unknown_keyword', member), keyword);
    }
    t.same(refuse({ additionalProperties: false }), schemaInvalid('type', member));
    t.same(refuse({ type: 'array', additionalProperties: false }), schemaInvalid('type', member));
    t.same(refuse({ type: ['object'], additionalProperties: false }), schemaInvalid('type', member));
    for (const additional of [undefined, true, {}, 'false', null, 0]) {
      t.same(
        refuse({ type: 'object', additionalProperties: additional }),
        schemaInvalid('additional_properties', member),
      );
    }
    for (const properties of [[], null, 'x', 1]) {
      t.same(refuse({ ...EMPTY_SCHEMA, properties }), schemaInvalid('properties', member));
    }
  }
});

function propertiesNamed(count: number, prefix = 'p') {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, { type: 'boolean' }]));
}

t.test(`a schema declares at most ${SCHEMA_MAX_PROPERTIES} properties`, async (t) => {
  t.equal(SCHEMA_MAX_PROPERTIES, 64);
  const schema = (count: number) => ({ ...EMPTY_SCHEMA, properties: propertiesNamed(count) });
  t.equal(Object.keys(parseToolContract(withInputSchema(schema(64))).input_schema.properties).length, 64);
  t.same(refusalOf(withInputSchema(schema(65))), schemaInvalid('too_many_properties'));
});

t.test('property names are an ASCII letter then letters, digits or _, at most 48 bytes', async (t) => {
  const schemaWith = (name: string) =>
    withInputSchema({ ...EMPTY_SCHEMA, properties: { [name]: { type: 'boolean' } } });
  for (const name of ['a', 'A1_b', 'filePath', 'constructor', 'toString', `a${'b'.repeat(47)}`]) {
    t.equal(refusalOf(schemaWith(name)), 'accepted', name);
  }
  for (const name of [
    '',
    '1a',
    '_a',
    '__proto__',
    'a-b',
    'a b',
    'a.b',
    'é',
    'a\u0000',
    `a${'b'.repeat(48)}`,
  ]) {
    t.same(refusalOf(schemaWith(name)), schemaInvalid('property_name'), JSON.stringify(name));
  }
});

t.test('each property is a string, boolean or integer schema and nothing else', async (t) => {
  for (const property of [
    true,
    'string',
    [],
    null,
    {},
    { type: 'number' },
    { type: 'object' },
    { type: 'array' },
  ]) {
    t.same(refusalOf(withProperty(property)), schemaInvalid('property_schema'), JSON.stringify(property));
  }
  t.same(refusalOf(withProperty({ type: 'null' })), schemaInvalid('property_schema'));
  t.same(
    refusalOf(withProperty({ type: ['string', 'null'], maxLength: 5 })),
    schemaInvalid('property_schema'),
  );
  t.same(
    refusalOf(withProperty({ type: 'object', properties: {}, additionalProperties: false })),
    schemaInvalid('property_schema'),
    'nested object schemas are refused',
  );
  const extra = [
    { type: 'string', maxLength: 5, description: 'x' },
    { type: 'string', maxLength: 5, minLength: 1 },
    { type: 'string', maxLength: 5, pattern: '.*' },
    { type: 'string', maxLength: 5, enum: ['a'] },
    { type: 'string', maxLength: 5, format: 'uri' },
    { type: 'boolean', default: true },
    { type: 'boolean', description: 'x' },
    { type: 'integer', minimum: 0, maximum: 1, multipleOf: 1 },
    { type: 'integer', minimum: 0, maximum: 1, exclusiveMaximum: 1 },
    { type: 'integer', minimum: 0, maximum: 1, description: 'x' },
  ];
  for (const property of extra) {
    t.same(refusalOf(withProperty(property)), schemaInvalid('property_keyword'), JSON.stringify(property));
  }
});

t.test('a string property needs an integer maxLength from 1 to 4096', async (t) => {
  for (const maxLength of [1, 4096, 64]) {
    t.equal(refusalOf(withProperty({ type: 'string', maxLength })), 'accepted', String(maxLength));
  }
  t.equal(
    parseToolContract(withProperty({ type: 'string', maxLength: 7 }).replace(':7', ':7.0')).input_schema
      .properties.p?.type,
    'string',
  );
  for (const maxLength of [undefined, 0, 4097, 1.5, '10', null, -1, true]) {
    t.same(
      refusalOf(withProperty({ type: 'string', maxLength })),
      schemaInvalid('string_max_length'),
      String(maxLength),
    );
  }
});

t.test('an integer property needs safe-integer minimum and maximum, minimum <= maximum', async (t) => {
  const accepted = [
    [0, 0],
    [-5, 5],
    [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  ];
  for (const [minimum, maximum] of accepted) {
    t.strictSame(
      parseToolContract(withProperty({ type: 'integer', minimum, maximum })).input_schema.properties.p,
      {
        type: 'integer',
        minimum,
        maximum,
      },
    );
  }
  const refused = [
    { type: 'integer', maximum: 5 },
    { type: 'integer', minimum: 5 },
    { type: 'integer' },
    { type: 'integer', minimum: 6, maximum: 5 },
    { type: 'integer', minimum: 0, maximum: 2 ** 53 },
    { type: 'integer', minimum: -(2 ** 53), maximum: 0 },
    { type: 'integer', minimum: 0.5, maximum: 1 },
    { type: 'integer', minimum: '0', maximum: 1 },
    { type: 'integer', minimum: null, maximum: 1 },
  ];
  for (const property of refused) {
    t.same(refusalOf(withProperty(property)), schemaInvalid('integer_bounds'), JSON.stringify(property));
  }
});

t.test('required lists declared properties once each, at most 32', async (t) => {
  const schema = (count: number, required: unknown) =>
    withInputSchema({ ...EMPTY_SCHEMA, properties: propertiesNamed(count), required });
  const names = (count: number) => Array.from({ length: count }, (_, i) => `p${i}`);
  t.same(parseToolContract(schema(40, names(32))).input_schema.required, names(32));
  t.same(refusalOf(schema(40, names(33))), schemaInvalid('too_many_required'));
  for (const required of ['p0', {}, null, [1], [null], ['q'], ['p0', 'p0'], ['P0'], ['constructor']]) {
    t.same(refusalOf(schema(2, required)), schemaInvalid('required'), JSON.stringify(required));
  }
  t.same(
    refusalOf(withInputSchema({ ...EMPTY_SCHEMA, required: ['a'] })),
    schemaInvalid('required'),
    'absent properties declare none',
  );
  t.same(parseToolContract(schema(2, [])).input_schema.required, []);
});

t.test('output_schema follows the same rules and is named in the refusal', async (t) => {
  const source = contractWith({
    output_schema: { ...EMPTY_SCHEMA, properties: { r: { type: 'string', maxLength: 0 } } },
  });
  t.same(refusalOf(source), schemaInvalid('string_max_length', 'output_schema'));
  t.equal(schemaRefusalMessage('output_schema', 'type'), 'output_schema must have type "object"');
});

t.test('refusal messages are fixed text that never echoes the source', async (t) => {
  const secret = 'sk-live-0123456789';
  const attempts = [
    contractWith({ [secret]: 1 }),
    withInputSchema({ ...EMPTY_SCHEMA, properties: { [secret]: { type: 'boolean' } } }),
    withProperty({ type: secret }),
    `{"${secret}":1,"${secret}":2}`,
    `${secret}`,
  ];
  for (const source of attempts) {
    const refusal = refusalOf(source);
    t.not(refusal, 'accepted');
    t.notMatch(JSON.stringify(refusal), /sk-live/);
  }
});

t.test('an unexpected failure inside the JSON parser is not disguised as a refusal', async (t) => {
  const { parseToolContract: parseWithBrokenParser } = await t.mockImport<
    typeof import('../../../core/resources/tool-contract.js')
  >('../../../core/resources/tool-contract.js', {
    '../../../core/resources/strict-json.js': {
      StrictJsonError: class extends Error {},
      parseStrictJson: () => {
        throw new RangeError('boom');
      },
    },
  });
  // A valid contract never reaches the exact parser (see the next test); a repeated name always does.
  const repeated = `${contractWith({ timeout_ms: 1_000 }).slice(0, -1)},"timeout_ms":1000}`;
  t.throws(() => parseWithBrokenParser(repeated), RangeError);
});

t.test('the exact parser reads only what JSON.parse cannot be trusted with', async (t) => {
  const texts: string[] = [];
  const { parseToolContract: parseCounting } = await t.mockImport<
    typeof import('../../../core/resources/tool-contract.js')
  >('../../../core/resources/tool-contract.js', {
    '../../../core/resources/strict-json.js': {
      ...(await import('../../../core/resources/strict-json.js')),
      parseStrictJson: (text: string) => {
        texts.push(text);
        return parseStrictJson(text);
      },
    },
  });
  const valid = contractWith({ timeout_ms: 2_000 });
  t.strictSame(parseCounting(valid), parseToolContract(valid));
  t.same(texts, [], 'a valid contract is read by JSON.parse alone');

  const duplicate = invalid(TOOL_CONTRACT_REFUSALS.duplicate_member);
  const cases: [string, string, ReturnType<typeof refusalOf>][] = [
    ['a repeat of an equal value', `${valid.slice(0, -1)},"timeout_ms":2000}`, duplicate],
    ['a repeat whose overwritten value holds colons', `{"timeout_ms":"a:b:c",${valid.slice(1)}`, duplicate],
    ['a repeat whose kept value breaks a contract rule', `${valid.slice(0, -1)},"timeout_ms":5}`, duplicate],
    [
      'a contract rule broken without a repeat',
      contractWith({ timeout_ms: 5 }),
      invalid(TOOL_CONTRACT_REFUSALS.timeout),
    ],
    ['text JSON.parse refuses', `${valid},`, invalid(TOOL_CONTRACT_REFUSALS.syntax)],
  ];
  for (const [name, text, refusal] of cases) {
    texts.length = 0;
    t.same(refusalOf(text), refusal, name);
    t.throws(() => parseCounting(text), { code: 'invalid_payload' }, name);
    t.same(texts, [text], `${name}: read again by the exact parser`);
  }
});

t.test('property: reading through JSON.parse gives exactly what the exact parser gives', async (t) => {
  /** The outcome with JSON.parse unavailable, so that every text goes to the exact parser. */
  function exactOutcome(text: string): ReturnType<typeof outcomeOf> {
    const native = JSON.parse;
    JSON.parse = () => {
      throw new SyntaxError('unavailable');
    };
    try {
      return outcomeOf(text);
    } finally {
      JSON.parse = native;
    }
  }
  function outcomeOf(text: string): { contract: unknown } | ReturnType<typeof refusalOf> {
    const refusal = refusalOf(text);
    return refusal === 'accepted' ? { contract: parseToolContract(text) } : refusal;
  }

  const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,8}$/);
  const property = fc.oneof(
    fc.integer({ min: 1, max: 4_096 }).map((maxLength) => ({ maxLength, type: 'string' })),
    fc.constant({ type: 'boolean' }),
    fc
      .tuple(fc.maxSafeInteger(), fc.maxSafeInteger())
      .map(([a, b]) => ({ type: 'integer', minimum: Math.min(a, b), maximum: Math.max(a, b) })),
  );
  const schema = fc.dictionary(name, property, { maxKeys: 5 }).chain((properties) =>
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.constant(properties),
        required: fc.subarray(Object.keys(properties)),
        additionalProperties: fc.constant(false),
      },
      { requiredKeys: ['type', 'additionalProperties'] },
    ),
  );
  const contract = fc.record(
    { input_schema: schema, output_schema: schema, timeout_ms: fc.integer({ min: 1_000, max: 600_000 }) },
    { requiredKeys: ['input_schema', 'output_schema'] },
  );
  /** Edits at the n-th occurrence of a member, each breaking or keeping one strict or contract rule. */
  const edits: [string, string][] = [
    ['"type":', '"type":"object","type":'],
    ['"type":', '"\\u0074ype":'],
    ['"type":', '"ty\\ud800pe":'],
    ['"additionalProperties":', '"additionalProperties":"a:b","additionalProperties":'],
    ['"additionalProperties":', '"x:y":":","additionalProperties":'],
    [
      '"additionalProperties":',
      `"additionalProperties":${'['.repeat(70)}${']'.repeat(70)},"additionalProperties":`,
    ],
    ['"required":[', '"required":["\\u003a",'],
    ['"maxLength":', '"maxLength":1,"maxLength":'],
  ];
  const text = fc
    .tuple(contract, fc.integer({ min: 0, max: 4 }), fc.option(fc.tuple(fc.nat(edits.length - 1), fc.nat(8))))
    .map(([value, indent, edit]) => {
      const json = JSON.stringify(value, null, indent).replaceAll(': ', ':');
      if (edit === null) return json;
      const [from, to] = edits[edit[0]]!;
      let at = -1;
      for (let n = 0; n <= edit[1]; n++) {
        const next = json.indexOf(from, at + 1);
        if (next === -1) break;
        at = next;
      }
      return at === -1 ? json : `${json.slice(0, at)}${to}${json.slice(at + from.length)}`;
    });
  fc.assert(
    fc.property(text, (source) => {
      t.strictSame(outcomeOf(source), exactOutcome(source), source);
    }),
    { numRuns: 400 },
  );
});

// ---- validateAgainstSchema ----------------------------------------------------------------------------

const SCHEMA: ObjectSchema = parseToolContract(
  withInputSchema({
    type: 'object',
    properties: {
      s: { type: 'string', maxLength: 3 },
      b: { type: 'boolean' },
      n: { type: 'integer', minimum: -2, maximum: 5 },
    },
    required: ['s', 'b'],
    additionalProperties: false,
  }),
).input_schema;

t.test('validateAgainstSchema accepts exactly the conforming objects', async (t) => {
  const good: unknown[] = [
    { s: 'abc', b: true },
    { s: '', b: false, n: -2 },
    { s: 'x', b: true, n: 5 },
    { n: 0, b: true, s: '🙂🙂🙂' },
    { s: 'e\u0301', b: true, n: -0 },
  ];
  for (const value of good) t.ok(validateAgainstSchema(SCHEMA, value), JSON.stringify(value));
  const bad: unknown[] = [
    null,
    [],
    'x',
    1,
    true,
    {},
    { s: 'abc' },
    { b: true },
    { s: 'abcd', b: true },
    { s: '🙂🙂🙂🙂', b: true },
    { s: 'e\u0301\u0301\u0301', b: true },
    { s: '\ud800', b: true },
    { s: 1, b: true },
    { s: null, b: true },
    { s: 'a', b: 'true' },
    { s: 'a', b: 1 },
    { s: 'a', b: null },
    { s: 'a', b: true, n: 6 },
    { s: 'a', b: true, n: -3 },
    { s: 'a', b: true, n: 1.5 },
    { s: 'a', b: true, n: '1' },
    { s: 'a', b: true, n: true },
    { s: 'a', b: true, n: null },
    { s: 'a', b: true, extra: 1 },
    { s: 'a', b: true, constructor: 1 },
    JSON.parse('{"s":"a","b":true,"__proto__":{"n":1}}'),
  ];
  for (const value of bad) t.notOk(validateAgainstSchema(SCHEMA, value), JSON.stringify(value));
});

t.test('validateAgainstSchema with an empty schema accepts only the empty object', async (t) => {
  const empty = parseToolContract(contractWith({})).input_schema;
  t.ok(validateAgainstSchema(empty, {}));
  t.notOk(validateAgainstSchema(empty, { a: 1 }));
  t.notOk(validateAgainstSchema(empty, []));
});

t.test(
  'property: generated conforming values validate; any extra member or broken value does not',
  async (t) => {
    const propertySchema = fc.oneof(
      fc.integer({ min: 1, max: 8 }).map((maxLength) => ({ type: 'string' as const, maxLength })),
      fc.constant({ type: 'boolean' as const }),
      fc
        .tuple(fc.integer({ min: -100, max: 100 }), fc.integer({ min: 0, max: 100 }))
        .map(([minimum, span]) => ({ type: 'integer' as const, minimum, maximum: minimum + span })),
    );
    const schemaAndValue = fc
      .dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), propertySchema, { maxKeys: 6 })
      .chain((properties) => {
        const names = Object.keys(properties);
        const arbitraryFor = (schema: (typeof properties)[string]) =>
          schema.type === 'string'
            ? fc.string({
                unit: fc.constantFrom('a', 'é', '\u0301', '🙂', '日'),
                maxLength: schema.maxLength,
              })
            : schema.type === 'boolean'
              ? fc.boolean()
              : fc.integer({ min: schema.minimum, max: schema.maximum });
        return fc.record({
          source: fc.subarray(names).map((required) =>
            JSON.stringify({
              input_schema: { type: 'object', properties, required, additionalProperties: false },
              output_schema: EMPTY_SCHEMA,
            }),
          ),
          value: fc.record(Object.fromEntries(names.map((name) => [name, arbitraryFor(properties[name]!)]))),
        });
      });
    fc.assert(
      fc.property(schemaAndValue, fc.stringMatching(/^[A-Z]\w{0,4}$/), ({ source, value }, extra) => {
        const schema = parseToolContract(source).input_schema;
        const full = value as Record<string, unknown>;
        if (!validateAgainstSchema(schema, full)) return false;
        if (validateAgainstSchema(schema, { ...full, [extra]: 1 })) return false;
        for (const name of schema.required) {
          const { [name]: _, ...missing } = full;
          if (validateAgainstSchema(schema, missing)) return false;
          if (validateAgainstSchema(schema, { ...full, [name]: [] })) return false;
        }
        return true;
      }),
      { numRuns: 500 },
    );
    t.pass('500 schemas checked');
  },
);

t.test('contractJsonBytes is the byte length of the contract as compact JSON', async (t) => {
  const propertySchema = fc.oneof(
    fc.integer({ min: 1, max: 4_096 }).map((maxLength) => ({ type: 'string' as const, maxLength })),
    fc.constant({ type: 'boolean' as const }),
    fc.tuple(fc.maxSafeInteger(), fc.maxSafeInteger(), fc.boolean()).map(([a, b, negativeZero]) => ({
      type: 'integer' as const,
      minimum: negativeZero ? -0 : Math.min(a, b),
      maximum: Math.max(a, b, 0),
    })),
  );
  const objectSchema = fc
    .dictionary(fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,47}$/), propertySchema, {
      maxKeys: SCHEMA_MAX_PROPERTIES,
    })
    .chain((properties) =>
      fc.record({
        properties: fc.option(fc.constant(properties), { nil: undefined }),
        required: fc.option(
          fc.subarray(Object.keys(properties), { maxLength: Math.min(32, Object.keys(properties).length) }),
          { nil: undefined },
        ),
      }),
    )
    .map(({ properties, required }) => ({
      type: 'object',
      ...(properties === undefined ? {} : { properties }),
      ...(required === undefined || properties === undefined ? {} : { required }),
      additionalProperties: false,
    }));
  const source = fc
    .record({
      input_schema: objectSchema,
      output_schema: objectSchema,
      timeout_ms: fc.option(fc.integer({ min: 1_000, max: 600_000 }), { nil: undefined }),
    })
    .map((contract) => JSON.stringify(contract));
  let counted = 0;
  fc.assert(
    fc.property(source, (text) => {
      const contract = parseToolContract(text);
      counted += 1;
      return contractJsonBytes(contract) === Buffer.byteLength(JSON.stringify(contract));
    }),
    { numRuns: 300 },
  );
  t.equal(counted, 300, 'every generated contract was valid and counted');
});
