import t from 'tap';
import type { ProviderRequest } from '../../../core/provider/chat-provider.js';
import {
  type ChatRequestOptions,
  chatRequestBody,
  chatRequestHeaders,
} from '../../../core/provider/chat-request.js';
import { endpointUrl } from '../../../core/provider/streaming-provider.js';

const MODEL = 'm';
const OPTIONS: ChatRequestOptions = { streamUsage: true, assistantToolCallContent: 'empty' };
const WEATHER_SCHEMA = {
  type: 'object',
  properties: { location: { type: 'string' } },
  required: ['location'],
};

function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    selection: { model: MODEL, reasoningEffort: null, fast: false },
    system: null,
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

t.test('a plain first round', async (t) => {
  t.same(chatRequestBody(request(), OPTIONS), {
    model: 'm',
    messages: [{ role: 'user', content: 'Hi' }],
    stream: true,
    stream_options: { include_usage: true },
  });
});

t.test("the turn's model, reasoning effort and fast mode; unset ones are left out", async (t) => {
  const body = chatRequestBody(
    request({ selection: { model: 'chosen', reasoningEffort: 'high', fast: true } }),
    OPTIONS,
  );
  t.match(body, { model: 'chosen', reasoning_effort: 'high', service_tier: 'priority' });
  const plain = chatRequestBody(request(), OPTIONS);
  t.notOk('reasoning_effort' in plain);
  t.notOk('service_tier' in plain);
});

t.test('the system text is one system message first, never a developer message', async (t) => {
  const body = chatRequestBody(request({ system: 'Be brief.\nAnswer in French.' }), OPTIONS);
  t.same(body.messages, [
    { role: 'system', content: 'Be brief.\nAnswer in French.' },
    { role: 'user', content: 'Hi' },
  ]);
  t.same(chatRequestBody(request({ system: '' }), OPTIONS).messages, [{ role: 'user', content: 'Hi' }]);
});

t.test('tools are function tools with their schema; no tool_choice, no parallel_tool_calls', async (t) => {
  const body = chatRequestBody(
    request({
      tools: [
        { name: 'get_weather', description: 'The weather', parameters: WEATHER_SCHEMA },
        { name: 'get_time', description: '', parameters: { type: 'object' } },
      ],
    }),
    OPTIONS,
  );
  t.same(body.tools, [
    {
      type: 'function',
      function: { name: 'get_weather', description: 'The weather', parameters: WEATHER_SCHEMA },
    },
    { type: 'function', function: { name: 'get_time', description: '', parameters: { type: 'object' } } },
  ]);
  t.notOk('tool_choice' in body);
  t.notOk('parallel_tool_calls' in body);
  t.notOk('tools' in chatRequestBody(request(), OPTIONS), 'no tools, no member');
});

t.test('stream_options is left out when usage is configured off', async (t) => {
  const body = chatRequestBody(request(), { ...OPTIONS, streamUsage: false });
  t.notOk('stream_options' in body);
  t.equal(body.stream, true);
});

const continuation = request({
  system: 'S',
  messages: [
    { role: 'user', content: 'Weather in Paris and Oslo?' },
    {
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { id: 'call_b', name: 'get_weather', arguments: '{"location":"Oslo"}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_a', content: 'sunny' },
    { role: 'tool', toolCallId: 'call_b', content: 'error: the service is down' },
  ],
});

t.test(
  'a continuation: the assistant calls with content "", then one tool message per call, in order',
  async (t) => {
    t.same(chatRequestBody(continuation, OPTIONS).messages, [
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Weather in Paris and Oslo?' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Paris"}' },
          },
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"Oslo"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
      { role: 'tool', tool_call_id: 'call_b', content: 'error: the service is down' },
    ]);
  },
);

t.test('the empty content of a calling assistant message can be null instead', async (t) => {
  const messages = chatRequestBody(continuation, { ...OPTIONS, assistantToolCallContent: 'null' })
    .messages as Record<string, unknown>[];
  t.equal(messages[2]?.content, null);
  t.ok('content' in messages[2]!, 'the member is present');
});

t.test(
  'assistant text beside calls is kept; an assistant answer without calls has no tool_calls',
  async (t) => {
    const messages = chatRequestBody(
      request({
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] },
          { role: 'tool', toolCallId: 'c', content: 'ok' },
          { role: 'assistant', content: 'Done.', toolCalls: [] },
          { role: 'user', content: 'b' },
        ],
      }),
      { ...OPTIONS, assistantToolCallContent: 'null' },
    ).messages as Record<string, unknown>[];
    t.match(messages[1], { role: 'assistant', content: 'Checking.' });
    t.same(messages[3], { role: 'assistant', content: 'Done.' });
  },
);

t.test(
  'replayed arguments are always a JSON object: what the model got wrong is replayed as {}',
  async (t) => {
    const replayed = (args: string) => {
      const messages = chatRequestBody(
        request({
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: args }] },
            { role: 'tool', toolCallId: 'c', content: 'error: invalid arguments' },
          ],
        }),
        OPTIONS,
      ).messages as { tool_calls?: { function: { arguments: string } }[] }[];
      return messages[1]?.tool_calls?.[0]?.function.arguments;
    };
    t.equal(replayed('{"a": [1, 2]}'), '{"a": [1, 2]}', 'valid arguments are sent exactly as written');
    for (const wrong of ['{"a":', '', '[1]', '"text"', '42', 'null']) t.equal(replayed(wrong), '{}', wrong);
  },
);

t.test('headers: JSON in, events out, extra headers, then the bearer key', async (t) => {
  t.same(chatRequestHeaders(null, {}), { 'content-type': 'application/json', accept: 'text/event-stream' });
  t.same(chatRequestHeaders('sk-1', { 'X-Title': 'magi', Authorization: 'Basic abc' }), {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'x-title': 'magi',
    authorization: 'Bearer sk-1',
  });
  t.same(chatRequestHeaders(null, { Authorization: 'Basic abc' }).authorization, 'Basic abc');
  const polluted = chatRequestHeaders(null, JSON.parse('{"__proto__":"x"}'));
  t.equal(Object.getPrototypeOf(polluted), Object.prototype);
  t.equal(Object.getOwnPropertyDescriptor(polluted, '__proto__')?.value, 'x', 'kept as an own member');
});

t.test('the URL is the base URL and /chat/completions, one slash between', async (t) => {
  t.equal(
    endpointUrl('http://127.0.0.1:8080/v1', 'chat/completions').href,
    'http://127.0.0.1:8080/v1/chat/completions',
  );
  t.equal(
    endpointUrl('http://127.0.0.1:8080/v1//', 'chat/completions').href,
    'http://127.0.0.1:8080/v1/chat/completions',
  );
});
