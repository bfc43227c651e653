import t from 'tap';
import type { ConversationMessage } from '../../../core/provider/chat-provider.js';
import { ProviderError } from '../../../core/provider/provider-error.js';
import { stream } from '../../helpers/provider-streams.js';
import { ResponsesStream, responsesErrorEvent } from '../../helpers/responses-streams.js';
import { openAiResponse } from '../../helpers/sdk-oracle.js';
import { apiFixture } from './api-fixture.js';

const ENCRYPTED = 'gAAAAABoISQ24OyVRYbkYfukbmWjEnvrqSTSaLbm6ZSSbbGQ0N3OESRh8qzXnfyNTGMITa3gBgzaHkxmELd3ZOvM';
const SUMMARY = [['**Checking the sky**\n\n', 'The user wants the weather.'], ['**Choosing a tool**']];
const ARGS = '{"location":"Paris","unit":"celsius"}';

function reasoningThenCall() {
  return new ResponsesStream()
    .created()
    .reasoning('rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7', SUMMARY, ENCRYPTED)
    .functionCall(
      'fc_6820f3871ee481918711cbd9b3e3d4c10ac5ba57',
      'call_mYbXYQKn2Q8v0EyUyalCVJDc',
      'get_weather',
      ARGS,
    )
    .completed();
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (failed: unknown) => failed,
  );
  if (!(error instanceof ProviderError)) throw new Error('the round did not fail as a provider error');
  return error;
}

t.test(
  'a reasoning item with its summary, then a call: summaries whole, the encrypted item carried',
  async (t) => {
    const { server, run, events } = await apiFixture(t, 'responses', { reasoningSummary: true });
    const response = reasoningThenCall();
    server.script(response);
    const round = await run();
    t.same(round.toolCalls, [{ id: 'call_mYbXYQKn2Q8v0EyUyalCVJDc', name: 'get_weather', arguments: ARGS }]);
    t.equal(round.text, '');
    t.equal(round.finishReason, 'tool_calls');
    t.same(round.usage, { promptTokens: 36, completionTokens: 87, totalTokens: 123 });
    t.same(
      events.filter((event) => event.kind === 'reasoning_summary'),
      [
        { kind: 'reasoning_summary', text: SUMMARY[0]!.join(''), redacted: false, truncated: false },
        { kind: 'reasoning_summary', text: SUMMARY[1]!.join(''), redacted: false, truncated: false },
      ],
    );
    t.ok(events.some((event) => event.kind === 'reasoning'));
    t.notOk(
      events.some((event) => event.kind === 'text'),
      'no summary is answer text',
    );
    t.match(round.carry, {
      api: 'responses',
      parts: [
        { kind: 'reasoning', item: { type: 'reasoning', encrypted_content: ENCRYPTED } },
        { kind: 'call', index: 0 },
      ],
    });

    // The official SDK reads the same stream to the same output.
    const oracle = await openAiResponse(response);
    t.match(oracle.output, [
      { type: 'reasoning', encrypted_content: ENCRYPTED, summary: [{ text: SUMMARY[0]!.join('') }, {}] },
      { type: 'function_call', call_id: 'call_mYbXYQKn2Q8v0EyUyalCVJDc', arguments: ARGS },
    ]);
  },
);

t.test('the next round sends the reasoning back as it came, before its call, and the result', async (t) => {
  const { server, run } = await apiFixture(t, 'responses', {
    reasoningSummary: true,
    apiKey: 'sk-responses',
  });
  server.script(reasoningThenCall());
  server.script(new ResponsesStream().created().message('msg_1', ['Sunny, ', '21 °C.']).completed());
  const first = await run();
  const messages: ConversationMessage[] = [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: first.text, toolCalls: first.toolCalls, carry: first.carry! },
    { role: 'tool', toolCallId: first.toolCalls[0]!.id, content: '{"sky":"clear"}' },
  ];
  const second = await run({ messages, system: 'Be brief.' });
  t.equal(second.text, 'Sunny, 21 °C.');
  const sent = server.requests[1]!;
  t.equal(sent.path, '/v1/responses');
  t.equal(sent.headers.authorization, 'Bearer sk-responses');
  t.match(sent.body, {
    model: 'scripted-model',
    instructions: 'Be brief.',
    store: false,
    stream: true,
    include: ['reasoning.encrypted_content'],
    reasoning: { summary: 'auto' },
  });
  t.same(sent.body.input, [
    { role: 'user', content: 'Weather in Paris?' },
    {
      id: 'rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7',
      type: 'reasoning',
      summary: SUMMARY.map((pieces) => ({ type: 'summary_text', text: pieces.join('') })),
      encrypted_content: ENCRYPTED,
    },
    { type: 'function_call', call_id: 'call_mYbXYQKn2Q8v0EyUyalCVJDc', name: 'get_weather', arguments: ARGS },
    { type: 'function_call_output', call_id: 'call_mYbXYQKn2Q8v0EyUyalCVJDc', output: '{"sky":"clear"}' },
  ]);
  t.ok(sent.text.includes(`"encrypted_content":"${ENCRYPTED}"`), 'byte for byte');
});

t.test('without the setting, summaries are reasoning only: never a summary event', async (t) => {
  const { server, run, events } = await apiFixture(t, 'responses');
  server.script(reasoningThenCall());
  await run();
  t.notOk(events.some((event) => event.kind === 'reasoning_summary'));
  t.ok(events.some((event) => event.kind === 'reasoning'));
  t.match(server.requests[0]!.body, { include: ['reasoning.encrypted_content'] });
  t.notOk('reasoning' in server.requests[0]!.body, 'no reasoning options when none is selected');
});

t.test(
  'a summary past the characters kept is cut and marked; one after encrypted reasoning is redacted',
  async (t) => {
    const { server, run, events } = await apiFixture(t, 'responses', {
      reasoningSummary: true,
      limits: { reasoning_summary_chars: 10 },
    });
    server.script(
      new ResponsesStream()
        .created()
        .reasoning('rs_1', [['0123456', '789abc']], 'enc-1')
        .reasoning('rs_2', [['after']], 'enc-2')
        .message('msg_1', ['ok'])
        .completed(),
    );
    await run();
    t.same(
      events.filter((event) => event.kind === 'reasoning_summary'),
      [
        { kind: 'reasoning_summary', text: '0123456789', redacted: false, truncated: true },
        { kind: 'reasoning_summary', text: 'after', redacted: true, truncated: false },
      ],
    );
  },
);

t.test('the request: function tools without strict validation, effort and fast mode', async (t) => {
  const { server, run } = await apiFixture(t, 'responses');
  server.script(new ResponsesStream().created().message('msg_1', ['Hi']).completed());
  await run({
    selection: { model: 'o4-mini', reasoningEffort: 'high', fast: true },
    tools: [{ name: 'get_time', description: 'The time', parameters: { type: 'object' } }],
  });
  t.match(server.requests[0]!.body, {
    model: 'o4-mini',
    reasoning: { effort: 'high' },
    service_tier: 'priority',
    tools: [
      {
        type: 'function',
        name: 'get_time',
        description: 'The time',
        parameters: { type: 'object' },
        strict: false,
      },
    ],
  });
  t.notOk('tool_choice' in server.requests[0]!.body);
});

t.test('response.incomplete ends the round with its reason and the text so far', async (t) => {
  const { server, run } = await apiFixture(t, 'responses');
  server.script(
    new ResponsesStream().created().message('msg_1', ['Half an ans']).incomplete('max_output_tokens'),
  );
  const round = await run();
  t.equal(round.text, 'Half an ans');
  t.equal(round.finishReason, 'max_output_tokens');
});

t.test('failures: response.failed, an error event, a stream cut short, an empty body', async (t) => {
  const { server, run, retries } = await apiFixture(t, 'responses');
  server.script(new ResponsesStream().created().failed());
  const failed = await failure(run());
  t.equal(failed.kind, 'in_band_error');
  t.notMatch(failed.message, 'The model failed', "the provider's words stay out");
  server.script(responsesErrorEvent());
  t.equal((await failure(run())).kind, 'in_band_error');
  server.script(new ResponsesStream().created().message('msg_1', ['Hi']).cut());
  t.equal((await failure(run())).kind, 'truncated');
  server.script(stream([]));
  t.equal((await failure(run())).kind, 'empty_response');
  t.equal(retries.length, 0, 'none of them is retried');
});

t.test('arguments of a call that never began are a malformed stream', async (t) => {
  const { server, run } = await apiFixture(t, 'responses');
  server.script(
    new ResponsesStream()
      .created()
      .event({
        type: 'response.function_call_arguments.delta',
        item_id: 'fc_x',
        output_index: 0,
        delta: '{}',
      })
      .completed(),
  );
  t.equal((await failure(run())).kind, 'malformed_stream');
});
