import t from 'tap';
import type { ConversationMessage } from '../../../core/provider/chat-provider.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import {
  blockDelta,
  blockStart,
  blockStop,
  messageEnd,
  messageStart,
  messagesText,
  messagesToolUse,
  overloaded529,
  overloadedEvent,
  ping,
  textBlock,
} from '../../helpers/messages-streams.js';
import { stream } from '../../helpers/provider-streams.js';
import { anthropicMessage, anthropicStatus } from '../../helpers/sdk-oracle.js';
import { apiFixture } from './api-fixture.js';

const SIGNATURE =
  'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+vwN8RstlQ/2L8gCZDn0Y7/Hh2Mh6Os2Yy5Ec9lSAtIl6iJVF0=';
const THINKING = ['The user asks for the weather.', ' I will call get_weather with "Paris".'];
const INPUT = '{"location": "Paris"}';

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (failed: unknown) => failed,
  );
  if (!(error instanceof ProviderError)) throw new Error('the round did not fail as a provider error');
  return error;
}

function thinkingThenCall() {
  return messagesToolUse([{ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: INPUT }], {
    thinking: { pieces: THINKING, signature: SIGNATURE },
  });
}

t.test('thinking with its signature, then a call: reasoning, never text, carried whole', async (t) => {
  const { server, run, events } = await apiFixture(t, 'messages');
  const response = thinkingThenCall();
  server.script(response);
  const round = await run();
  t.same(round.toolCalls, [{ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', arguments: INPUT }]);
  t.equal(round.text, '', 'thinking is never answer text');
  t.equal(round.finishReason, 'tool_use');
  t.notOk(events.some((event) => event.kind === 'text'));
  t.notOk(
    events.some((event) => event.kind === 'reasoning_summary'),
    'thinking is not a documented summary',
  );
  t.same(
    events.filter((event) => event.kind === 'reasoning').map((event) => (event as { delta: string }).delta),
    THINKING,
  );
  t.same(round.carry, {
    api: 'messages',
    parts: [
      { kind: 'reasoning', item: { type: 'thinking', thinking: THINKING.join(''), signature: SIGNATURE } },
      { kind: 'call', index: 0 },
    ],
  });
  const oracle = await anthropicMessage(response);
  t.match(oracle.content, [
    { type: 'thinking', thinking: THINKING.join(''), signature: SIGNATURE },
    { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', input: { location: 'Paris' } },
  ]);
});

t.test(
  'the next round returns the thinking block byte for byte, then the call, then its result',
  async (t) => {
    const { server, run } = await apiFixture(t, 'messages', { apiKey: 'sk-ant-key', maxTokens: 16_000 });
    server.script(thinkingThenCall());
    server.script(messagesText(['Sunny.']));
    const first = await run({ selection: { model: 'claude', reasoningEffort: 'medium', fast: false } });
    const messages: ConversationMessage[] = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: first.text, toolCalls: first.toolCalls, carry: first.carry! },
      { role: 'tool', toolCallId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: '{"sky":"clear"}' },
    ];
    await run({
      messages,
      system: 'Be brief.',
      selection: { model: 'claude', reasoningEffort: 'medium', fast: false },
    });
    const [sentFirst, sentSecond] = server.requests;
    t.equal(sentSecond!.path, '/v1/messages');
    t.match(sentSecond!.headers, { 'x-api-key': 'sk-ant-key', 'anthropic-version': '2023-06-01' });
    t.notOk(sentSecond!.headers.authorization);
    t.match(sentSecond!.body, {
      model: 'claude',
      max_tokens: 16_000,
      system: 'Be brief.',
      thinking: { type: 'enabled', budget_tokens: 8_192 },
      stream: true,
    });
    t.same(sentSecond!.body.messages, [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: THINKING.join(''), signature: SIGNATURE },
          {
            type: 'tool_use',
            id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
            name: 'get_weather',
            input: { location: 'Paris' },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', content: '{"sky":"clear"}' },
        ],
      },
    ]);
    const exact = JSON.stringify({ type: 'thinking', thinking: THINKING.join(''), signature: SIGNATURE });
    t.ok(sentSecond!.text.includes(exact), 'the block as it came, signature byte for byte');
    t.match(sentFirst!.body, { thinking: { type: 'enabled', budget_tokens: 8_192 } });
  },
);

t.test('pause_turn: the round is paused, its content carried to be sent back as it is', async (t) => {
  const { server, run } = await apiFixture(t, 'messages');
  server.script(stream([messageStart(), ...textBlock(0, ['Searching']), ...messageEnd('pause_turn')]));
  const round = await run();
  t.equal(round.paused, true);
  t.equal(round.finishReason, 'pause_turn');
  t.same(round.carry, { api: 'messages', parts: [{ kind: 'text', text: 'Searching' }] });
  t.same(round.toolCalls, []);
});

t.test('refusal and max_tokens end the round normally, with their reason and the text so far', async (t) => {
  const { server, run } = await apiFixture(t, 'messages');
  server.script(messagesText(['I cannot help with that.'], 'refusal'));
  t.match(await run(), { text: 'I cannot help with that.', finishReason: 'refusal' });
  server.script(messagesText(['Half'], 'max_tokens'));
  t.match(await run(), { text: 'Half', finishReason: 'max_tokens' });
});

t.test('redacted thinking is carried and sent back unchanged', async (t) => {
  const { server, run, events } = await apiFixture(t, 'messages');
  const data =
    'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj';
  server.script(
    stream([
      messageStart(),
      blockStart(0, { type: 'redacted_thinking', data }),
      blockStop(0),
      ...textBlock(1, ['Done.']),
      ...messageEnd('end_turn'),
    ]),
  );
  const round = await run();
  t.equal(round.text, 'Done.');
  t.same(round.carry?.parts, [
    { kind: 'reasoning', item: { type: 'redacted_thinking', data } },
    { kind: 'text', text: 'Done.' },
  ]);
  t.ok(events.some((event) => event.kind === 'reasoning'));
});

t.test('HTTP 529 and an overloaded_error before any output are retried like a 5xx', async (t) => {
  const { server, run, retries } = await apiFixture(t, 'messages');
  t.equal(await anthropicStatus(overloaded529()), 529, 'the SDK reads the documented 529');
  server.script(overloaded529());
  server.script(overloadedEvent());
  server.script(messagesText(['Back.']));
  t.equal((await run()).text, 'Back.');
  t.same(
    retries.map((retry) => [retry.kind, retry.status]),
    [
      ['http_status', 529],
      ['overloaded', null],
    ],
  );
});

t.test('an overloaded_error after output has begun is not retried; other errors never are', async (t) => {
  const { server, run, retries } = await apiFixture(t, 'messages');
  server.script(
    stream([messageStart(), ...textBlock(0, ['Par']), ...overloadedEvent().steps, ...messageEnd('end_turn')]),
  );
  t.equal((await failure(run())).kind, 'overloaded');
  server.script(stream([messageStart(), blockDelta(0, { type: 'text_delta', text: 'x' })]));
  t.equal((await failure(run())).kind, 'malformed_stream', 'a delta of a block that never started');
  server.script(stream([messageStart(), ping(), ...textBlock(0, ['cut'])]));
  t.equal((await failure(run())).kind, 'truncated');
  server.script(stream([ping()]));
  t.equal((await failure(run())).kind, 'empty_response');
  t.equal(retries.length, 0);
});

t.test('max_tokens, the thinking budget kept under it, and no fast mode', async (t) => {
  const { server, run } = await apiFixture(t, 'messages', { apiKey: 'k' });
  server.script(messagesText(['ok']));
  await run({ selection: { model: 'claude', reasoningEffort: 'high', fast: true } });
  const body = server.requests[0]!.body;
  t.equal(body.max_tokens, 4_096);
  t.same(body.thinking, { type: 'enabled', budget_tokens: 3_072 }, 'kept 1,024 tokens under max_tokens');
  t.notOk('service_tier' in body, 'fast mode has no Messages equivalent');
  t.same(body.messages, [{ role: 'user', content: 'Hi' }]);
});
