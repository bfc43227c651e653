import fc from 'fast-check';
import t from 'tap';
import type { ProviderEvent, ProviderRound } from '../../../core/provider/chat-provider.js';
import { EventStreamReader } from '../../../core/provider/event-stream-reader.js';
import { roundBounds } from '../../../core/provider/provider-limits.js';
import { RoundAssembler } from '../../../core/provider/round-assembler.js';
import { chunk, usageChunk } from '../../helpers/provider-streams.js';

const failedAs = (kind: string) => ({ name: 'ProviderError', kind });

const BOUNDS = { responseBytes: 1 << 20, eventChars: 1 << 16, ...roundBounds() };

function read(
  pieces: readonly (string | Uint8Array)[],
  bounds = BOUNDS,
): { round: ProviderRound; events: ProviderEvent[] } {
  const events: ProviderEvent[] = [];
  const reader = new EventStreamReader(new RoundAssembler((event) => events.push(event), bounds), bounds);
  for (const piece of pieces) {
    reader.push(typeof piece === 'string' ? Buffer.from(piece) : piece);
    if (reader.done) break;
  }
  return { round: reader.end(), events };
}

const data = (value: unknown, end = '\n\n') => `data: ${JSON.stringify(value)}${end}`;

t.test('comments, CRLF and multi-line data are read as the SSE format says', async (t) => {
  const { round, events } = read([
    ': ping\r\n\r\n',
    `data: ${JSON.stringify(chunk({ content: 'a' }))}\r\n\r\n`,
    ':keep-alive\n',
    'data: {"choices":[{"index":0,\r\n',
    'data: "delta":{"content":"b"}}]}\r\n\r\n',
    'data: {"choices":[{"index":0,\rdata: "delta":{"content":"c"}}]}\r\r',
    data(chunk({}, { finishReason: 'stop' })),
    'data: [DONE]\n\n',
  ]);
  t.equal(round.text, 'abc');
  t.equal(events.length, 3);
});

t.test('unknown fields and ids are ignored, other event types are not chunks', async (t) => {
  const { round } = read([
    'id: 7\nretry: 1000\nretry: soon\nfoo: bar\n',
    data(chunk({ content: 'a' })),
    `event: ping\n${data(chunk({ content: 'IGNORED' }))}`,
    `event: message\n${data(chunk({ content: 'b' }, { finishReason: 'stop' }))}`,
  ]);
  t.equal(round.text, 'ab');
});

t.test('a UTF-8 byte order mark and characters cut between chunks', async (t) => {
  const bytes = Buffer.concat([
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(data(chunk({ content: 'héllo 🙂' }))),
    Buffer.from(data(chunk({}, { finishReason: 'stop' }))),
  ]);
  const pieces = [...bytes].map((byte) => Uint8Array.of(byte));
  t.equal(read(pieces).round.text, 'héllo 🙂');
});

t.test('the stream reports its own failures', async (t) => {
  t.throws(() => read(['event: error\ndata: {"message":"x"}\n\n']), failedAs('in_band_error'));
  t.throws(
    () => read([data(chunk({ content: 'a' })), 'error: {"message":"x"}\n\n']),
    failedAs('in_band_error'),
  );
  t.throws(() => read([data({ error: { message: 'x' } })]), failedAs('in_band_error'));
});

t.test(
  'bytes that are not UTF-8 are a malformed stream; a character cut by the end is truncation',
  async (t) => {
    t.throws(() => read([Buffer.from([0x64, 0x61, 0xff, 0x0a])]), failedAs('malformed_stream'));
    t.throws(
      () => read([data(chunk({ content: 'a' })), Buffer.from('data: {"x":"'), Buffer.from([0xf0, 0x9f])]),
      failedAs('truncated'),
    );
  },
);

t.test('the last event counts without its blank line; cut inside its JSON it is truncation', async (t) => {
  t.equal(read([data(chunk({ content: 'a' }, { finishReason: 'stop' }), '')]).round.text, 'a');
  t.equal(read([data(chunk({ content: 'a' })), 'data: [DONE]']).round.finishReason, null);
  t.equal(read([data(chunk({ content: 'a' })), 'data: [DONE]\r']).round.text, 'a');
  t.throws(() => read([data(chunk({ content: 'a' })), 'data: {"choices":[{"delta"']), failedAs('truncated'));
  t.throws(
    () => read([data(chunk({ content: 'a' })), 'data: {"choices":[]}\ndata: {']),
    failedAs('truncated'),
  );
});

t.test('nothing after [DONE] is read', async (t) => {
  const events: ProviderEvent[] = [];
  const reader = new EventStreamReader(new RoundAssembler((event) => events.push(event), BOUNDS), BOUNDS);
  reader.push(
    Buffer.from(`${data(chunk({ content: 'a' }))}data: [DONE]\n\n${data(chunk({ content: 'b' }))}`),
  );
  t.equal(reader.done, true);
  reader.push(Buffer.from('data: not json\n\n'));
  t.same(reader.end(), { text: 'a', toolCalls: [], finishReason: null, usage: null });
  t.equal(events.length, 1);
});

t.test('an empty body, or one with only comments, is an empty response', async (t) => {
  t.throws(() => read([]), failedAs('empty_response'));
  t.throws(() => read([': ping\n\n', ': ping\n\n']), failedAs('empty_response'));
});

t.test('the byte and event bounds', async (t) => {
  const small = { ...BOUNDS, responseBytes: 100 };
  t.throws(() => read([data(chunk({ content: 'x'.repeat(200) }))], small), failedAs('too_large'));
  t.equal(
    read([data(chunk({ content: 'x' }, { finishReason: 'stop' }))], { ...small, responseBytes: 1000 }).round
      .text,
    'x',
  );
  const narrow = { ...BOUNDS, eventChars: 64 };
  t.throws(() => read([`data: "${'x'.repeat(40)}\ndata: ${'x'.repeat(40)}`], narrow), failedAs('too_large'));
});

const textPiece = fc.constantFrom(
  'Hel',
  'lo',
  ' ',
  'é',
  '🙂',
  '\n',
  '"',
  '\\',
  '<think>',
  '</think>',
  '<th',
  'ink>',
);

/** A valid stream of text (tags included), reasoning and tool calls, with its line ends chosen. */
const validStream = fc
  .record({
    texts: fc.array(
      fc.array(textPiece, { maxLength: 4 }).map((p) => p.join('')),
      { maxLength: 6 },
    ),
    reasoning: fc.array(fc.constantFrom('why', ' so', ' 🙂'), { maxLength: 3 }),
    args: fc.array(fc.constantFrom('{"a', '":', ' 1', ', "b": "é"', '}'), { maxLength: 5 }),
    lineEnd: fc.constantFrom('\n', '\r\n', '\r'),
    withDone: fc.boolean(),
    comments: fc.boolean(),
  })
  .map(({ texts, reasoning, args, lineEnd, withDone, comments }) => {
    const events: string[] = [];
    for (const piece of reasoning) events.push(JSON.stringify(chunk({ reasoning_content: piece })));
    for (const piece of texts) events.push(JSON.stringify(chunk({ content: piece })));
    events.push(
      JSON.stringify(chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '' } }] })),
    );
    for (const piece of args) {
      events.push(JSON.stringify(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] })));
    }
    events.push(JSON.stringify(chunk({}, { finishReason: 'tool_calls' })));
    events.push(JSON.stringify(usageChunk({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })));
    if (withDone) events.push('[DONE]');
    const ending = lineEnd + lineEnd;
    return events.map((event) => `${comments ? `: ping${lineEnd}` : ''}data: ${event}${ending}`).join('');
  });

/** Events merged by kind, so that streams cut differently compare equal. */
function merged(events: readonly ProviderEvent[]): ProviderEvent[] {
  const out: ProviderEvent[] = [];
  for (const event of events) {
    const last = out[out.length - 1];
    if (last && last.kind === event.kind && 'delta' in last && 'delta' in event) {
      out[out.length - 1] = { ...last, delta: last.delta + event.delta };
    } else {
      out.push(event);
    }
  }
  return out;
}

t.test('any cut of the bytes of a valid stream gives the same events and round', async () => {
  fc.assert(
    fc.property(
      validStream,
      fc.array(fc.integer({ min: 1, max: 13 }), { minLength: 1, maxLength: 12 }),
      (text, sizes) => {
        const bytes = Buffer.from(text);
        const whole = read([bytes]);
        const pieces: Buffer[] = [];
        for (let at = 0, i = 0; at < bytes.length; i++) {
          const size = sizes[i % sizes.length]!;
          pieces.push(bytes.subarray(at, at + size));
          at += size;
        }
        const cut = read(pieces);
        if (JSON.stringify(cut.round) !== JSON.stringify(whole.round)) throw new Error('the round changed');
        if (JSON.stringify(merged(cut.events)) !== JSON.stringify(merged(whole.events))) {
          throw new Error('the events changed');
        }
        const eventText = merged(whole.events)
          .filter((event) => event.kind === 'text')
          .map((event) => ('delta' in event ? event.delta : ''))
          .join('');
        if (eventText !== whole.round.text) throw new Error('the text events differ from the round text');
      },
    ),
  );
});
