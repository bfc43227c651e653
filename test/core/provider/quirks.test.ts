import t from 'tap';
import type { ProviderError } from '../../../core/provider/provider-error.js';
import { QUIRKS } from '../../helpers/provider-streams.js';
import { providerFixture } from './provider-fixture.js';

const SYNTHESIZED = /^call_[A-Za-z0-9_-]{22}$/;
const PARIS = '{"location": "Paris"}';

/** Each server quirk of the notes, over HTTP, through the adapter. */

t.test(
  'llama-cpp-python: repeated index, id, type and name, the legacy function_call, no usage',
  async (t) => {
    const { server, run, events } = await providerFixture(t);
    server.script(QUIRKS.llamaCppPythonToolCall());
    t.same(await run(), {
      text: '',
      toolCalls: [
        {
          id: 'call__0_get_weather_cmpl-8e3c5c1e-6a2b-4bd5-9e0a-2f1f6c1d9a77',
          name: 'get_weather',
          arguments: PARIS,
        },
      ],
      finishReason: 'tool_calls',
      usage: null,
    });
    t.same(events, [{ kind: 'tool_call_started' }]);
  },
);

t.test('llama-cpp-python: an id over 128 bytes is replaced by one of the daemon', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.llamaCppPythonToolCall(`call__0_get_weather_cmpl-${'x'.repeat(110)}`));
  const round = await run();
  t.match(round.toolCalls, [{ id: SYNTHESIZED, name: 'get_weather', arguments: PARIS }]);
});

t.test('Ollama: whole calls in one chunk each, index 0 reused, reasoning deltas', async (t) => {
  const { server, run, events } = await providerFixture(t);
  server.script(QUIRKS.ollamaParallelCalls());
  t.same((await run()).toolCalls, [
    { id: 'call_a', name: 'get_weather', arguments: PARIS },
    { id: 'call_b', name: 'get_weather', arguments: '{"location": "Oslo"}' },
  ]);
  t.same(events, [
    { kind: 'reasoning', delta: 'Two cities.' },
    { kind: 'tool_call_started' },
    { kind: 'tool_call_started' },
  ]);
});

t.test('whole calls without index in one chunk', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.wholeCallsWithoutIndex());
  t.same((await run()).toolCalls, [
    { id: 'call_1', name: 'get_weather', arguments: PARIS },
    { id: 'call_2', name: 'get_time', arguments: '{}' },
  ]);
});

t.test('llama.cpp: arguments as an object', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.objectArguments());
  t.same((await run()).toolCalls, [{ id: 'call_o', name: 'get_weather', arguments: '{"location":"Paris"}' }]);
});

t.test('a {} placeholder, then the full JSON', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.placeholderArguments());
  t.same((await run()).toolCalls, [{ id: 'call_p', name: 'get_weather', arguments: PARIS }]);
});

t.test('a missing id is synthesized', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.missingId());
  t.match((await run()).toolCalls, [
    { id: SYNTHESIZED, name: 'get_weather', arguments: '{"location": "Paris"}' },
  ]);
});

t.test('duplicated and blank ids become unique', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.duplicateAndBlankIds());
  const calls = (await run()).toolCalls;
  t.match(calls, [
    { id: 'call_0', name: 'get_weather' },
    { id: SYNTHESIZED, name: 'get_time' },
    { id: SYNTHESIZED, name: 'get_date' },
  ]);
  t.equal(new Set(calls.map((call) => call.id)).size, 3);
});

t.test('a late name, an empty name later, a missing then late type', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.lateNameAndType());
  t.same((await run()).toolCalls, [
    { id: 'call_l', name: 'get_weather', arguments: '{"location": "Paris"}' },
  ]);
});

t.test('finish_reason "stop" with tool calls still has the calls', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.stopWithToolCalls());
  t.match(await run(), { finishReason: 'stop', toolCalls: [{ id: 'call_s', name: 'get_weather' }] });
});

t.test('reasoning_content and reasoning: reasoning events, read once per chunk', async (t) => {
  const { server, run, events } = await providerFixture(t);
  server.script(QUIRKS.reasoningFields());
  t.equal((await run()).text, 'Answer.');
  t.same(events, [
    { kind: 'reasoning', delta: 'Think' },
    { kind: 'reasoning', delta: 'ing.' },
    { kind: 'reasoning', delta: ' More.' },
    { kind: 'text', delta: 'Answer.' },
  ]);
});

t.test('<think> in the content, its tags cut across chunks', async (t) => {
  const { server, run, events } = await providerFixture(t);
  server.script(QUIRKS.thinkTagsInContent());
  t.equal((await run()).text, 'Hello <b>world</b>');
  t.same(events, [
    { kind: 'reasoning', delta: 'Plan it.' },
    { kind: 'text', delta: 'Hello' },
    { kind: 'text', delta: ' <b>world</b>' },
  ]);
});

t.test('empty first chunks, null and unknown members', async (t) => {
  const { server, run, events } = await providerFixture(t);
  server.script(QUIRKS.emptyFirstChunks());
  t.match(await run(), { text: 'Hi', finishReason: 'stop', toolCalls: [] });
  t.same(events, [{ kind: 'text', delta: 'Hi' }]);
});

t.test('CRLF, keep-alive comments and multi-line data', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.crlfCommentsMultiline());
  t.equal((await run()).text, 'Hello');
});

t.test('the final usage chunk', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.finalUsage());
  t.same((await run()).usage, { promptTokens: 11, completionTokens: 7, totalTokens: 18 });
});

t.test('a finish without [DONE] is a normal end', async (t) => {
  const { server, run } = await providerFixture(t);
  server.script(QUIRKS.noDone());
  t.match(await run(), { text: 'Hi', finishReason: 'stop' });
});

const failures: [keyof typeof QUIRKS, ProviderError['kind']][] = [
  ['truncated', 'truncated'],
  ['emptyBody', 'empty_response'],
  ['inBandError', 'in_band_error'],
  ['finishReasonError', 'in_band_error'],
  ['errorEvent', 'in_band_error'],
  ['errorField', 'in_band_error'],
];

for (const [quirk, kind] of failures) {
  t.test(`${quirk} is a failure: ${kind}`, async (t) => {
    const { server, run } = await providerFixture(t);
    server.script(QUIRKS[quirk]());
    await t.rejects(run(), { name: 'ProviderError', kind, status: null });
    t.equal(server.requests.length, 1, 'and it is not retried');
  });
}

t.test('every quirk of the helper is exercised here', async (t) => {
  const covered = new Set([
    ...failures.map(([quirk]) => quirk),
    'llamaCppPythonToolCall',
    'ollamaParallelCalls',
    'wholeCallsWithoutIndex',
    'objectArguments',
    'placeholderArguments',
    'missingId',
    'duplicateAndBlankIds',
    'lateNameAndType',
    'stopWithToolCalls',
    'reasoningFields',
    'thinkTagsInContent',
    'emptyFirstChunks',
    'crlfCommentsMultiline',
    'finalUsage',
    'noDone',
  ]);
  t.same(Object.keys(QUIRKS).sort(), [...covered].sort());
});
