import t from 'tap';
import type { ProviderEvent } from '../../../core/provider/chat-provider.js';
import { roundBounds } from '../../../core/provider/provider-limits.js';
import { RoundAssembler } from '../../../core/provider/round-assembler.js';
import { chunk, usageChunk } from '../../helpers/provider-streams.js';

const failedAs = (kind: string) => ({ name: 'ProviderError', kind });

function assembler(summaryChars: number | null = null): { round: RoundAssembler; events: ProviderEvent[] } {
  const events: ProviderEvent[] = [];
  return {
    round: new RoundAssembler((event) => events.push(event), { ...roundBounds(), summaryChars }),
    events,
  };
}

/** A delta as OpenRouter streams a summary fragment: the text in `reasoning` and in a summary detail. */
const summaryDelta = (text: string, index = 0) => ({
  reasoning: text,
  reasoning_details: [{ type: 'reasoning.summary', summary: text, format: 'openai-responses-v1', index }],
});

function feed(round: RoundAssembler, chunks: unknown[]): void {
  for (const value of chunks) round.data(JSON.stringify(value));
}

t.test('text deltas are passed in order and collected; the finish and usage are kept', async (t) => {
  const { round, events } = assembler();
  feed(round, [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Hel' }),
    chunk({ content: 'lo' }),
    chunk({}, { finishReason: 'stop' }),
    usageChunk({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }),
  ]);
  t.equal(round.data('[DONE]'), true);
  t.same(events, [
    { kind: 'text', delta: 'Hel' },
    { kind: 'text', delta: 'lo' },
  ]);
  t.same(round.finish(true), {
    text: 'Hello',
    toolCalls: [],
    finishReason: 'stop',
    usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 },
  });
});

t.test('the sentinel may carry surrounding spaces; any other data is a chunk', async (t) => {
  const { round } = assembler();
  t.equal(round.data(' [DONE] '), true);
  t.equal(round.data(JSON.stringify(chunk({ content: 'x' }))), false);
});

t.test('usage: absent is null, fields that are not counts are null', async (t) => {
  const absent = assembler();
  feed(absent.round, [chunk({ content: 'a' }, { finishReason: 'stop' })]);
  t.equal(absent.round.finish(false).usage, null);

  const odd = assembler();
  feed(odd.round, [
    chunk({ content: 'a' }, { finishReason: 'stop' }),
    { choices: [], usage: { prompt_tokens: '3', completion_tokens: -1, total_tokens: 1.5 } },
  ]);
  t.same(odd.round.finish(false).usage, { promptTokens: null, completionTokens: null, totalTokens: null });
});

t.test('reasoning fields are reasoning events, one per chunk when both carry it', async (t) => {
  const { round, events } = assembler();
  feed(round, [
    chunk({ reasoning_content: 'a', reasoning: 'a' }),
    chunk({ reasoning: 'b' }),
    chunk({ reasoning_content: 'c', reasoning: '' }),
    chunk({ content: 'Answer' }, { finishReason: 'stop' }),
  ]);
  t.same(events, [
    { kind: 'reasoning', delta: 'a' },
    { kind: 'reasoning', delta: 'b' },
    { kind: 'reasoning', delta: 'c' },
    { kind: 'text', delta: 'Answer' },
  ]);
  t.equal(round.finish(false).text, 'Answer', 'reasoning is never answer text');
});

t.test('<think> sections of the content are reasoning; a held tail is flushed at the end', async (t) => {
  const { round, events } = assembler();
  feed(round, [
    chunk({ content: '<think>hm' }),
    chunk({ content: '</think>Yes <' }),
    chunk({}, { finishReason: 'stop' }),
  ]);
  t.same(events, [
    { kind: 'reasoning', delta: 'hm' },
    { kind: 'text', delta: 'Yes ' },
  ]);
  t.equal(round.finish(true).text, 'Yes <');
  t.same(events[2], { kind: 'text', delta: '<' });
});

t.test('tool calls: started events, finished calls, whatever the finish reason says', async (t) => {
  const { round, events } = assembler();
  feed(round, [
    chunk({ content: 'Let me check.' }),
    chunk({ tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
    chunk({
      tool_calls: [{ index: 1, id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }],
    }),
    chunk({}, { finishReason: 'stop' }),
  ]);
  t.same(events, [
    { kind: 'text', delta: 'Let me check.' },
    { kind: 'tool_call_started' },
    { kind: 'tool_call_started' },
  ]);
  t.same(round.finish(true), {
    text: 'Let me check.',
    toolCalls: [
      { id: 'a', name: 'f', arguments: '{}' },
      { id: 'b', name: 'g', arguments: '{}' },
    ],
    finishReason: 'stop',
    usage: null,
  });
});

t.test('the legacy function_call is ignored beside tool_calls, and used alone', async (t) => {
  const both = assembler();
  feed(both.round, [
    chunk({
      tool_calls: [{ index: 0, id: 'a', function: { name: 'f', arguments: '{"x":1}' } }],
      function_call: { name: 'f', arguments: '{"x":1}' },
    }),
    chunk({ tool_calls: null, function_call: { name: 'f', arguments: '' } }, { finishReason: 'tool_calls' }),
  ]);
  t.same(both.round.finish(true).toolCalls, [{ id: 'a', name: 'f', arguments: '{"x":1}' }]);
  t.equal(both.events.length, 1);

  const alone = assembler();
  feed(alone.round, [
    chunk({ function_call: { name: 'f', arguments: '{"x":' } }),
    chunk({ function_call: { arguments: '1}' } }, { finishReason: 'function_call' }),
  ]);
  t.match(alone.round.finish(true), {
    toolCalls: [{ name: 'f', arguments: '{"x":1}' }],
    finishReason: 'function_call',
  });
});

t.test('choices other than the first are ignored; a choice without index is the first', async (t) => {
  const { round } = assembler();
  feed(round, [
    { choices: [{ delta: { content: 'a' } }, { index: 1, delta: { content: 'X' } }] },
    { choices: [{ index: 2, delta: { content: 'Y' }, finish_reason: 'length' }] },
    { choices: [{ index: 0, delta: { content: 'b' }, finish_reason: 'stop' }] },
  ]);
  t.match(round.finish(true), { text: 'ab', finishReason: 'stop' });
});

t.test('odd but harmless shapes are fine', async (t) => {
  const { round } = assembler();
  feed(round, [
    { choices: [] },
    { choices: 'none' },
    {},
    { choices: [null, 3, { delta: null }, { delta: { content: 7, role: '' } }] },
    chunk({ role: '', content: null, tool_calls: [], extra: { nested: true } }),
    { ...chunk({ content: 'ok' }), error: null, unknown: 1 },
    chunk({}, { finishReason: '' }),
    chunk({}, { finishReason: 'stop' }),
  ]);
  t.match(round.finish(true), { text: 'ok', finishReason: 'stop', toolCalls: [] });
});

t.test('data that is not a JSON object is a malformed stream; cut by the end it is truncation', async (t) => {
  for (const data of ['{"choices":', 'hello', '[1]', '42', 'null', '"text"']) {
    t.throws(() => assembler().round.data(data), failedAs('malformed_stream'), data);
  }
  t.throws(() => assembler().round.data('{"choices":', true), failedAs('truncated'));
  t.throws(() => assembler().round.data('[1]', true), failedAs('malformed_stream'));
});

t.test('data nested past 64 levels is a malformed stream before any of it is used', async (t) => {
  const deepArguments = (depth: number) =>
    `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":${'['.repeat(depth)}${']'.repeat(depth)}}}]}}]}`;
  // The chunk, its choice, delta, call and function take 7 levels, `arguments` the rest.
  const { round } = assembler();
  round.data(deepArguments(57));
  t.match(round.finish(true), { toolCalls: [{ id: 'c1', name: 'f' }] }, '64 levels in all are read');
  for (const depth of [58, 5_000, 100_000]) {
    t.throws(() => assembler().round.data(deepArguments(depth)), failedAs('malformed_stream'), `${depth}`);
  }
});

t.test('errors in the stream are failures', async (t) => {
  t.throws(() => assembler().round.data('{"error":{"message":"x"}}'), failedAs('in_band_error'));
  t.throws(() => assembler().round.data('{"error":"overloaded"}'), failedAs('in_band_error'));
  t.throws(
    () => assembler().round.data(JSON.stringify(chunk({ content: '' }, { finishReason: 'error' }))),
    failedAs('in_band_error'),
  );
});

t.test('the end: empty stream, truncation, [DONE] without a finish', async (t) => {
  t.throws(() => assembler().round.finish(false), failedAs('empty_response'));
  t.throws(() => assembler().round.finish(true), failedAs('empty_response'), '[DONE] alone is empty too');

  const cut = assembler();
  feed(cut.round, [chunk({ content: 'Hi' })]);
  t.throws(() => cut.round.finish(false), failedAs('truncated'));

  const unfinished = assembler();
  feed(unfinished.round, [chunk({ content: 'Hi' })]);
  t.same(unfinished.round.finish(true), { text: 'Hi', toolCalls: [], finishReason: null, usage: null });

  const noDone = assembler();
  feed(noDone.round, [chunk({ content: 'Hi' }, { finishReason: 'length' })]);
  t.match(noDone.round.finish(false), { text: 'Hi', finishReason: 'length' });
});

t.test('an error thrown by the consumer comes out unchanged', async (t) => {
  const refusal = new Error('budget');
  const round = new RoundAssembler(() => {
    throw refusal;
  }, roundBounds());
  t.throws(() => round.data(JSON.stringify(chunk({ content: 'x' }))), refusal);
});

t.test('documented summaries, when read, are whole events before the answer begins', async (t) => {
  const { round, events } = assembler(1_000);
  feed(round, [
    chunk(summaryDelta('**Checking**')),
    chunk(summaryDelta(' the notes')),
    chunk(summaryDelta('Second', 1)),
    chunk({ content: 'Answer' }, { finishReason: 'stop' }),
  ]);
  t.same(events, [
    { kind: 'reasoning', delta: '**Checking**' },
    { kind: 'reasoning', delta: ' the notes' },
    { kind: 'reasoning', delta: 'Second' },
    { kind: 'reasoning_summary', text: '**Checking** the notes', redacted: false, truncated: false },
    { kind: 'reasoning_summary', text: 'Second', redacted: false, truncated: false },
    { kind: 'text', delta: 'Answer' },
  ]);
  t.equal(round.finish(false).text, 'Answer');
});

t.test('a summary is complete when a tool call begins, or at the end of the round', async (t) => {
  const called = assembler(1_000);
  feed(called.round, [
    chunk(summaryDelta('Calling')),
    chunk({
      tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
    }),
  ]);
  t.same(
    called.events.map((event) => event.kind),
    ['reasoning', 'reasoning_summary', 'tool_call_started'],
  );
  const ended = assembler(1_000);
  feed(ended.round, [chunk(summaryDelta('Only thought')), chunk({}, { finishReason: 'stop' })]);
  t.same(
    ended.events.map((event) => event.kind),
    ['reasoning'],
    'not complete while the round may go on',
  );
  ended.round.finish(true);
  t.same(ended.events.at(-1), {
    kind: 'reasoning_summary',
    text: 'Only thought',
    redacted: false,
    truncated: false,
  });
  t.equal(ended.events.filter((event) => event.kind === 'reasoning_summary').length, 1);
});

t.test('without the configuration, summary details are not read at all', async (t) => {
  const { round, events } = assembler();
  feed(round, [chunk(summaryDelta('Private')), chunk({ content: 'Answer' }, { finishReason: 'stop' })]);
  t.same(events, [
    { kind: 'reasoning', delta: 'Private' },
    { kind: 'text', delta: 'Answer' },
  ]);
});

t.test('generic reasoning text never becomes a summary, even when summaries are read', async (t) => {
  const { round, events } = assembler(1_000);
  feed(round, [
    chunk({ reasoning_content: 'thinking', reasoning: 'thinking' }),
    chunk({ reasoning_details: [{ type: 'reasoning.text', text: 'more thinking', index: 0 }] }),
    chunk({ content: '<think>tagged</think>Answer' }, { finishReason: 'stop' }),
  ]);
  round.finish(false);
  t.same(
    events.filter((event) => event.kind === 'reasoning_summary'),
    [],
  );
  t.same(events, [
    { kind: 'reasoning', delta: 'thinking' },
    { kind: 'reasoning', delta: 'tagged' },
    { kind: 'text', delta: 'Answer' },
  ]);
});

t.test(
  'answer text has its own bound, in UTF-8 bytes; reasoning is not kept and does not count',
  async (t) => {
    const within = new RoundAssembler(() => {}, { ...roundBounds(), textBytes: 4 });
    feed(within, [
      chunk({ reasoning_content: 'long reasoning, never kept' }),
      chunk({ content: 'é' }),
      chunk({ content: 'é' }),
    ]);
    t.equal(within.finish(true).text, 'éé');
    const past = new RoundAssembler(() => {}, { ...roundBounds(), textBytes: 4 });
    feed(past, [chunk({ content: 'éé' })]);
    t.throws(() => past.data(JSON.stringify(chunk({ content: 'x' }))), failedAs('too_large'));
  },
);
