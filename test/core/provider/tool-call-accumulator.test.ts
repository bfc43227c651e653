import fc from 'fast-check';
import t from 'tap';
import type { ToolCall } from '../../../core/provider/chat-provider.js';
import { roundBounds } from '../../../core/provider/provider-limits.js';
import { ToolCallAccumulator } from '../../../core/provider/tool-call-accumulator.js';

const SYNTHESIZED = /^call_[A-Za-z0-9_-]{22}$/;

/** Feeds each element as one chunk's `delta.tool_calls`. */
function accumulate(chunks: unknown[][], bounds = roundBounds()): ToolCall[] {
  const calls = new ToolCallAccumulator(bounds);
  for (const deltas of chunks) calls.addToolCalls(deltas);
  return calls.finish();
}

t.test('the standard stream: a first delta with id and name, then argument fragments', async (t) => {
  const calls = accumulate([
    [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
    [{ index: 0, function: { arguments: '{"loc' } }],
    [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }],
    [{ index: 0, function: { arguments: 'ation":"Paris"}' } }],
    [{ index: 1, function: { arguments: '{}' } }],
  ]);
  t.same(calls, [
    { id: 'call_a', name: 'get_weather', arguments: '{"location":"Paris"}' },
    { id: 'call_b', name: 'get_time', arguments: '{}' },
  ]);
});

t.test('addToolCalls reports how many calls a chunk opened, and ignores what is not a delta', async (t) => {
  const calls = new ToolCallAccumulator(roundBounds());
  t.equal(calls.addToolCalls(null), 0);
  t.equal(calls.addToolCalls([]), 0);
  t.equal(calls.addToolCalls([null, 7, 'x', [], { index: 0 }, { index: 0, type: 'function' }]), 0);
  t.equal(calls.addToolCalls([{ index: 0, id: 'a', function: { name: 'f' } }]), 1);
  t.equal(calls.addToolCalls([{ index: 0, function: { arguments: '{}' } }]), 0);
  t.equal(
    calls.addToolCalls([
      { index: 1, id: 'b', function: { name: 'g' } },
      { index: 2, id: 'c', function: { name: 'h' } },
    ]),
    2,
  );
  t.equal(calls.finish().length, 3);
});

t.test('an id repeated on every chunk is assigned, never concatenated', async (t) => {
  const id = 'call__0_get_weather_cmpl-8e3c5c1e-6a2b-4bd5-9e0a-2f1f6c1d9a77';
  const calls = accumulate(
    ['{"', 'location', '":', ' "', 'Paris', '"}', ''].map((piece) => [
      { index: 0, id, type: 'function', function: { name: 'get_weather', arguments: piece } },
    ]),
  );
  t.same(calls, [{ id, name: 'get_weather', arguments: '{"location": "Paris"}' }]);
});

t.test('a missing or blank id is synthesized, unique in the round', async (t) => {
  const calls = accumulate([
    [{ index: 0, function: { name: 'a', arguments: '{}' } }],
    [{ index: 1, id: '', function: { name: 'b', arguments: '{}' } }],
    [{ index: 2, id: '   ', function: { name: 'c', arguments: '{}' } }],
    [{ index: 3, id: 42, function: { name: 'd', arguments: '{}' } }],
  ]);
  t.same(
    calls.map((call) => call.name),
    ['a', 'b', 'c', 'd'],
  );
  for (const call of calls) t.match(call.id, SYNTHESIZED);
  t.equal(new Set(calls.map((call) => call.id)).size, 4);
});

t.test('an id arriving after the first delta is kept', async (t) => {
  const calls = accumulate([
    [{ index: 0, function: { name: 'a', arguments: '{"x":' } }],
    [{ index: 0, id: 'call_late', function: { arguments: '1}' } }],
  ]);
  t.same(calls, [{ id: 'call_late', name: 'a', arguments: '{"x":1}' }]);
});

t.test('an id duplicated across distinct calls is replaced on the later ones', async (t) => {
  const calls = accumulate([
    [{ index: 0, id: 'call_0', function: { name: 'a', arguments: '{}' } }],
    [{ index: 1, id: 'call_0', function: { name: 'b', arguments: '{}' } }],
    [{ index: 2, id: 'call_0', function: { name: 'c', arguments: '{}' } }],
  ]);
  t.equal(calls[0]?.id, 'call_0');
  t.match(calls[1]?.id, SYNTHESIZED);
  t.match(calls[2]?.id, SYNTHESIZED);
  t.not(calls[1]?.id, calls[2]?.id);
});

t.test('an id over 128 bytes is replaced; one of exactly 128 bytes is kept', async (t) => {
  const exact = `call_${'é'.repeat(61)}x`;
  t.equal(Buffer.byteLength(exact), 128);
  const calls = accumulate([
    [{ index: 0, id: exact, function: { name: 'a', arguments: '{}' } }],
    [{ index: 1, id: `${exact}y`, function: { name: 'b', arguments: '{}' } }],
  ]);
  t.equal(calls[0]?.id, exact);
  t.match(calls[1]?.id, SYNTHESIZED);
});

t.test('index 0 reused for distinct calls: a different id starts a new call', async (t) => {
  const calls = accumulate([
    [{ index: 0, id: 'call_a', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
    [{ index: 0, id: 'call_b', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } }],
  ]);
  t.same(calls, [
    { id: 'call_a', name: 'get_weather', arguments: '{"location":"Paris"}' },
    { id: 'call_b', name: 'get_weather', arguments: '{"location":"Oslo"}' },
  ]);
});

t.test(
  'index 0 reused without ids: a different name, or a new whole call after a complete one',
  async (t) => {
    const calls = accumulate([
      [{ index: 0, function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
      [{ index: 0, function: { name: 'get_time', arguments: '{"zone":"CET"}' } }],
      [{ index: 0, function: { name: 'get_time', arguments: '{"zone":"UTC"}' } }],
    ]);
    t.same(
      calls.map(({ name, arguments: args }) => ({ name, args })),
      [
        { name: 'get_weather', args: '{"location":"Paris"}' },
        { name: 'get_time', args: '{"zone":"CET"}' },
        { name: 'get_time', args: '{"zone":"UTC"}' },
      ],
    );
    for (const { id } of calls) t.match(id, SYNTHESIZED);
  },
);

t.test('deltas without index continue the latest call unless they show another', async (t) => {
  const calls = accumulate([
    [{ id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":' } }],
    [{ function: { arguments: '1}' } }],
    [{ id: 'call_2', function: { name: 'b', arguments: '{}' } }],
    [{ id: 'call_2', function: { arguments: '' } }],
  ]);
  t.same(calls, [
    { id: 'call_1', name: 'a', arguments: '{"x":1}' },
    { id: 'call_2', name: 'b', arguments: '{}' },
  ]);
});

t.test('whole calls in one chunk, several in the same chunk', async (t) => {
  const calls = accumulate([
    [
      { id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
      { id: 'call_2', type: 'function', function: { name: 'b', arguments: '{"y":2}' } },
    ],
  ]);
  t.same(calls, [
    { id: 'call_1', name: 'a', arguments: '{"x":1}' },
    { id: 'call_2', name: 'b', arguments: '{"y":2}' },
  ]);
});

t.test('a name repeated on every chunk is assigned; "" on later chunks is ignored', async (t) => {
  const calls = accumulate([
    [{ index: 0, id: 'c', function: { name: 'get_weather', arguments: '{"a":' } }],
    [{ index: 0, function: { name: 'get_weather', arguments: '1' } }],
    [{ index: 0, function: { name: '', arguments: '}' } }],
  ]);
  t.same(calls, [{ id: 'c', name: 'get_weather', arguments: '{"a":1}' }]);
});

t.test('a name arriving after the first argument fragment, and a type missing or late', async (t) => {
  const calls = accumulate([
    [{ index: 0, id: 'c', function: { arguments: '{"a":' } }],
    [{ index: 0, type: 'function', function: { name: 'late', arguments: '1}' } }],
  ]);
  t.same(calls, [{ id: 'c', name: 'late', arguments: '{"a":1}' }]);
});

t.test('arguments as an object are serialized', async (t) => {
  const calls = accumulate([
    [{ index: 0, id: 'c', function: { name: 'a', arguments: { location: 'Paris', days: [1, 2] } } }],
  ]);
  t.same(calls, [{ id: 'c', name: 'a', arguments: '{"location":"Paris","days":[1,2]}' }]);
});

t.test('an object alone opens a call or replaces what came before', async (t) => {
  t.same(
    accumulate([
      [{ index: 0, id: 'c', function: { name: 'a', arguments: '{"partial":' } }],
      [{ index: 0, function: { arguments: { whole: true } } }],
      [{ index: 1, function: { arguments: { second: 1 } } }],
      [{ index: 1, id: 'd', function: { name: 'b', arguments: null } }],
    ]),
    [
      { id: 'c', name: 'a', arguments: '{"whole":true}' },
      { id: 'd', name: 'b', arguments: '{"second":1}' },
    ],
  );
});

t.test('a {} placeholder followed by the full JSON keeps the full JSON, whole or in fragments', async (t) => {
  t.same(
    accumulate([
      [{ index: 0, id: 'c', function: { name: 'a', arguments: '{}' } }],
      [{ index: 0, function: { arguments: '{"location":"Paris"}' } }],
    ]),
    [{ id: 'c', name: 'a', arguments: '{"location":"Paris"}' }],
  );
  t.same(
    accumulate([
      [{ index: 0, id: 'c', function: { name: 'a', arguments: '{}' } }],
      [{ index: 0, function: { name: 'a', arguments: '{"location":' } }],
      [{ index: 0, function: { arguments: '"Paris"}' } }],
    ]),
    [{ id: 'c', name: 'a', arguments: '{"location":"Paris"}' }],
  );
});

t.test('arguments are final at the end, not when the buffer first parses', async (t) => {
  t.same(
    accumulate([
      [{ index: 0, id: 'c', function: { name: 'a', arguments: '{"q": ' } }],
      [{ index: 0, function: { arguments: '{}' } }],
      [{ index: 0, function: { arguments: ', "r": [1]' } }],
      [{ index: 0, function: { arguments: '[2]' } }],
    ]),
    [{ id: 'c', name: 'a', arguments: '{"q": {}, "r": [1][2]' }],
    'fragments that parse on their own are appended to arguments still open',
  );
});

t.test('no arguments at all are "{}"', async (t) => {
  t.same(accumulate([[{ index: 0, id: 'c', function: { name: 'a' } }]]), [
    { id: 'c', name: 'a', arguments: '{}' },
  ]);
});

t.test('the legacy function_call counts only in a round without tool_calls', async (t) => {
  const legacy = new ToolCallAccumulator(roundBounds());
  t.equal(legacy.addFunctionCall({ name: 'get_weather', arguments: '{"a":' }), 1);
  t.equal(legacy.addFunctionCall({ name: 'get_weather', arguments: '1}' }), 0);
  t.equal(legacy.addFunctionCall(null), 0);
  const calls = legacy.finish();
  t.equal(calls.length, 1);
  t.match(calls[0], { name: 'get_weather', arguments: '{"a":1}', id: SYNTHESIZED });

  const both = new ToolCallAccumulator(roundBounds());
  both.addFunctionCall({ name: 'get_weather', arguments: '{"a":1}' });
  both.addToolCalls([{ index: 0, id: 'call_m', function: { name: 'get_weather', arguments: '{"a":1}' } }]);
  t.same(both.finish(), [{ id: 'call_m', name: 'get_weather', arguments: '{"a":1}' }]);
});

t.test('a call that never got a name is a malformed stream', async (t) => {
  t.throws(() => accumulate([[{ index: 0, id: 'c', function: { arguments: '{}' } }]]), {
    name: 'ProviderError',
    kind: 'malformed_stream',
  });
});

const call = fc.record({
  id: fc.stringMatching(/^call_[a-z0-9]{1,12}$/),
  name: fc.stringMatching(/^[a-z_]{1,12}$/),
  arguments: fc
    .dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.oneof(fc.string(), fc.integer(), fc.boolean()), {
      maxKeys: 4,
    })
    .map((value) => JSON.stringify(value)),
});

t.test(
  'any fragmentation of a valid stream, with the repetitions servers add, gives the same calls',
  async () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(call, { minLength: 1, maxLength: 4, selector: (c) => c.id }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.record({ repeatId: fc.boolean(), repeatName: fc.boolean(), withType: fc.boolean() }),
        fc.boolean(),
        (calls, sizes, style, onePerChunk) => {
          const chunks: unknown[][] = [];
          calls.forEach((c, index) => {
            const head = { index, id: c.id, function: { name: c.name, arguments: '' } };
            chunks.push([style.withType ? { ...head, type: 'function' } : head]);
            let at = 0;
            for (let i = 0; at < c.arguments.length; i++) {
              const piece = c.arguments.slice(at, at + sizes[i % sizes.length]!);
              at += piece.length;
              chunks.push([
                {
                  index,
                  ...(style.repeatId ? { id: c.id } : {}),
                  function: { ...(style.repeatName ? { name: c.name } : {}), arguments: piece },
                },
              ]);
            }
          });
          const fed = onePerChunk ? chunks : [chunks.flat()];
          const got = accumulate(fed);
          if (JSON.stringify(got) !== JSON.stringify(calls)) {
            throw new Error(`got ${JSON.stringify(got)}, want ${JSON.stringify(calls)}`);
          }
        },
      ),
    );
  },
);

t.test(
  'the largest write_file, in fragments that each look like a new value, is assembled whole',
  async (t) => {
    // 262,144 bytes of "}{": every fragment after the first opens with `{` right after a closing `}`, the
    // case where the arguments so far must be checked for completeness before the fragment is appended.
    const content = '}{'.repeat(131_072);
    const head = '{"path":"a.txt","content":"}';
    const calls = new ToolCallAccumulator(roundBounds());
    calls.addToolCalls([{ index: 0, id: 'w', function: { name: 'write_file', arguments: head } }]);
    for (let i = 1; i < 131_072; i += 1) calls.addToolCalls([{ index: 0, function: { arguments: '{}' } }]);
    calls.addToolCalls([{ index: 0, function: { arguments: '{"}' } }]);
    const [call] = calls.finish();
    t.equal(call?.arguments, JSON.stringify({ path: 'a.txt', content }));
  },
);
