import t from 'tap';
import type { ToolCall } from '../../../core/provider/chat-provider.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { roundBounds } from '../../../core/provider/provider-limits.js';
import { ToolCallAccumulator } from '../../../core/provider/tool-call-accumulator.js';

/** Feeds each element as one chunk's `delta.tool_calls`. */
function accumulate(chunks: unknown[][], bounds = roundBounds()): ToolCall[] {
  const calls = new ToolCallAccumulator(bounds);
  for (const deltas of chunks) calls.addToolCalls(deltas);
  return calls.finish();
}

t.test('calls past those a round runs are listed, marked, and keep no arguments', async (t) => {
  const calls = new ToolCallAccumulator({ ...roundBounds(), runCalls: 2, listedCalls: 4 });
  calls.addToolCalls([{ index: 0, id: 'a', function: { name: 'a', arguments: '{"n":0}' } }]);
  calls.addToolCalls([{ index: 1, id: 'b', function: { name: 'b' } }]);
  calls.addToolCalls([{ index: 1, function: { arguments: '{}' } }]);
  t.equal(calls.addToolCalls([{ index: 2, id: 'c', function: { name: 'c', arguments: '{"n":' } }]), 1);
  calls.addToolCalls([{ index: 2, function: { arguments: '2}' } }]);
  calls.addToolCalls([{ index: 3, id: 'd', function: { name: 'd', arguments: '{}' } }]);
  t.same(calls.finish(), [
    { id: 'a', name: 'a', arguments: '{"n":0}' },
    { id: 'b', name: 'b', arguments: '{}' },
    { id: 'c', name: 'c', arguments: '{}', exceeds: 'round_calls' },
    { id: 'd', name: 'd', arguments: '{}', exceeds: 'round_calls' },
  ]);
});

t.test('a call past the calls a round may list at all is a stream too large', async (t) => {
  const calls = new ToolCallAccumulator({ ...roundBounds(), runCalls: 1, listedCalls: 2 });
  calls.addToolCalls([{ index: 0, id: 'a', function: { name: 'a' } }]);
  calls.addToolCalls([{ index: 1, id: 'b', function: { name: 'b' } }]);
  const error = t.throws(() => calls.addToolCalls([{ index: 2, id: 'c', function: { name: 'c' } }]));
  t.type(error, ProviderError);
  t.equal((error as ProviderError).kind, 'too_large');
});

t.test('80 calls in one round: 64 run, 16 are marked, none is lost', async (t) => {
  const chunks = Array.from({ length: 80 }, (_, i) => [
    { index: i, id: `call_${i}`, function: { name: 'read_file', arguments: `{"path":"f${i}"}` } },
  ]);
  const calls = accumulate(chunks);
  t.equal(calls.length, 80);
  t.equal(calls.filter((call) => call.exceeds === undefined).length, 64);
  t.same(
    calls.slice(64).map((call) => call.exceeds),
    Array(16).fill('round_calls'),
  );
  t.equal(calls[63]?.arguments, '{"path":"f63"}');
});

t.test(
  "a call whose arguments pass their bound keeps none of them; the round's others are whole",
  async (t) => {
    const bounds = { ...roundBounds(), callArgumentBytes: 16, roundArgumentBytes: 1_000 };
    const calls = accumulate(
      [
        [{ index: 0, id: 'big', function: { name: 'w', arguments: '{"a":"0123' } }],
        [{ index: 1, id: 'small', function: { name: 'r', arguments: '{"b":1}' } }],
        [{ index: 0, function: { arguments: '456789ab"}' } }],
        [{ index: 0, function: { arguments: ' ' } }],
      ],
      bounds,
    );
    t.same(calls, [
      { id: 'big', name: 'w', arguments: '{}', exceeds: 'arguments' },
      { id: 'small', name: 'r', arguments: '{"b":1}' },
    ]);
    // Exactly at the bound, in bytes: "é" is two.
    const exact = '{"a":"ééééé"}';
    t.equal(Buffer.byteLength(exact), 18);
    t.same(
      accumulate([[{ index: 0, id: 'x', function: { name: 'w', arguments: exact } }]], {
        ...bounds,
        callArgumentBytes: 18,
      }),
      [{ id: 'x', name: 'w', arguments: exact }],
    );
    // Object arguments are measured as serialized.
    t.same(
      accumulate(
        [[{ index: 0, id: 'o', function: { name: 'w', arguments: { a: 'x'.repeat(20) } } }]],
        bounds,
      ),
      [{ id: 'o', name: 'w', arguments: '{}', exceeds: 'arguments' }],
    );
  },
);

t.test(
  "the round's arguments together: the call that would pass the round's bound is the one refused",
  async (t) => {
    const bounds = { ...roundBounds(), callArgumentBytes: 100, roundArgumentBytes: 20 };
    const calls = accumulate(
      [
        [{ index: 0, id: 'a', function: { name: 'w', arguments: '{"a":"0123456"}' } }],
        [{ index: 1, id: 'b', function: { name: 'w', arguments: '{"b":"0123456"}' } }],
        [{ index: 2, id: 'c', function: { name: 'w', arguments: '{}' } }],
      ],
      bounds,
    );
    t.same(calls, [
      { id: 'a', name: 'w', arguments: '{"a":"0123456"}' },
      { id: 'b', name: 'w', arguments: '{}', exceeds: 'arguments' },
      { id: 'c', name: 'w', arguments: '{}' },
    ]);
  },
);

t.test('a surrogate pair cut between fragments counts four bytes, as the whole text does', async (t) => {
  const text = '{"a":"🙂🙂"}';
  const bound = Buffer.byteLength(text);
  // Cut inside both characters: after each high surrogate.
  const pieces = [text.slice(0, 7), text.slice(7, 9), text.slice(9)];
  t.equal(pieces[1]?.length, 2);
  t.equal(
    Buffer.byteLength(pieces[0]!) + Buffer.byteLength(pieces[1]!) + Buffer.byteLength(pieces[2]!),
    bound + 4,
  );
  const calls = accumulate(
    [
      [{ index: 0, id: 'x', function: { name: 'w', arguments: pieces[0] } }],
      ...pieces.slice(1).map((piece) => [{ index: 0, function: { arguments: piece } }]),
    ],
    { ...roundBounds(), callArgumentBytes: bound },
  );
  t.same(calls, [{ id: 'x', name: 'w', arguments: text }]);
});
