import t from 'tap';
import type { ConversationMessage, ProviderRequest } from '../../../core/provider/chat-provider.js';
import {
  type MessagesRequestOptions,
  messagesRequestBody,
  messagesRequestHeaders,
} from '../../../core/provider/messages/messages-request.js';

const OPTIONS: MessagesRequestOptions = {
  maxTokens: 8_192,
  modelMaxTokens: { 'claude-haiku': 2_048 },
  version: '2023-06-01',
  auth: 'x-api-key',
};

function body(messages: ConversationMessage[], overrides: Partial<ProviderRequest> = {}) {
  return messagesRequestBody(
    {
      selection: { model: 'claude', reasoningEffort: null, fast: false },
      system: null,
      messages,
      tools: [],
      signal: new AbortController().signal,
      ...overrides,
    },
    OPTIONS,
  );
}

t.test(
  "a round's results join one user message; an assistant message with nothing to say is left out",
  async (t) => {
    const sent = body([
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: '', toolCalls: [] },
      { role: 'user', content: 'Q2' },
      {
        role: 'assistant',
        content: 'Let me look.',
        toolCalls: [
          { id: 'a', name: 'f', arguments: '{"x":1}' },
          { id: 'b', name: 'g', arguments: 'not json' },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: '1' },
      { role: 'tool', toolCallId: 'b', content: '{"error":{"code":"invalid_arguments"}}' },
    ]);
    t.same(sent.messages, [
      { role: 'user', content: 'Q1' },
      { role: 'user', content: 'Q2' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_use', id: 'a', name: 'f', input: { x: 1 } },
          { type: 'tool_use', id: 'b', name: 'g', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: '1' },
          { type: 'tool_result', tool_use_id: 'b', content: '{"error":{"code":"invalid_arguments"}}' },
        ],
      },
    ]);
  },
);

t.test('what another API carried is not read: the round is sent from its text and calls', async (t) => {
  const sent = body([
    {
      role: 'assistant',
      content: 'Hi',
      toolCalls: [],
      carry: { api: 'responses', parts: [{ kind: 'reasoning', item: { type: 'reasoning', id: 'rs' } }] },
    },
  ]);
  t.same(sent.messages, [{ role: 'assistant', content: [{ type: 'text', text: 'Hi' }] }]);
});

t.test('max_tokens by model; no thinking for no effort, none or minimal, or too small a room', async (t) => {
  t.equal(
    body([], { selection: { model: 'claude-haiku', reasoningEffort: null, fast: false } }).max_tokens,
    2_048,
  );
  for (const effort of [null, 'none', 'minimal'] as const) {
    t.notOk('thinking' in body([], { selection: { model: 'claude', reasoningEffort: effort, fast: false } }));
  }
  t.same(body([], { selection: { model: 'claude', reasoningEffort: 'low', fast: false } }).thinking, {
    type: 'enabled',
    budget_tokens: 2_048,
  });
  t.same(body([], { selection: { model: 'claude-haiku', reasoningEffort: 'high', fast: false } }).thinking, {
    type: 'enabled',
    budget_tokens: 1_024,
  });
  const tools = body([], { tools: [{ name: 'f', description: 'F', parameters: { type: 'object' } }] }).tools;
  t.same(tools, [{ name: 'f', description: 'F', input_schema: { type: 'object' } }]);
});

t.test('headers: x-api-key or bearer, the version unless configured, never both keys', async (t) => {
  t.same(messagesRequestHeaders('k', {}, OPTIONS), {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'anthropic-version': '2023-06-01',
    'x-api-key': 'k',
  });
  const bearer = messagesRequestHeaders(
    'k',
    { 'Anthropic-Version': '2024-01-01' },
    { ...OPTIONS, auth: 'bearer' },
  );
  t.equal(bearer.authorization, 'Bearer k');
  t.equal(bearer['anthropic-version'], '2024-01-01');
  t.notOk('x-api-key' in bearer);
  t.notOk('x-api-key' in messagesRequestHeaders(null, {}, OPTIONS), 'no key, no header');
});
