import type { ConversationMessage, ProviderRequest, ReasoningEffort, ToolCall } from '../chat-provider.js';

export interface MessagesRequestOptions {
  /** `max_tokens` of every request, unless `modelMaxTokens` names the model. */
  maxTokens: number;
  /** `max_tokens` by model id, where a model needs its own. */
  modelMaxTokens: Readonly<Record<string, number>>;
  /** `anthropic-version`. */
  version: string;
  /** How the key is sent: `x-api-key: KEY` (Anthropic's own API) or `authorization: Bearer KEY`. */
  auth: 'x-api-key' | 'bearer';
}

/** The thinking budget of a reasoning effort, in tokens; none and minimal ask for no thinking. */
const THINKING_BUDGETS: Readonly<Record<ReasoningEffort, number>> = {
  none: 0,
  minimal: 0,
  low: 2_048,
  medium: 8_192,
  high: 24_576,
};

/** The least thinking budget the API takes. */
const MIN_THINKING_BUDGET = 1_024;

/**
 * The body of `POST {baseUrl}/messages`: the system prompt in its own field, the conversation as
 * alternating messages (each round's calls as `tool_use` blocks, their results as `tool_result` blocks
 * of the next user message), tools with their `input_schema`. A round that carried thinking is sent back
 * as it came: its blocks in their order, each thinking block with its signature unchanged. With a
 * reasoning effort, thinking is asked for with its budget, kept at least 1,024 tokens under `max_tokens`
 * (none when that leaves less than the least budget).
 */
export function messagesRequestBody(
  request: ProviderRequest,
  options: MessagesRequestOptions,
): Record<string, unknown> {
  const { selection } = request;
  const maxTokens = options.modelMaxTokens[selection.model] ?? options.maxTokens;
  const effort = selection.reasoningEffort;
  const budget = Math.min(effort === null ? 0 : THINKING_BUDGETS[effort], maxTokens - MIN_THINKING_BUDGET);
  return {
    model: selection.model,
    max_tokens: maxTokens,
    ...(request.system !== null && request.system !== '' ? { system: request.system } : {}),
    messages: conversation(request.messages),
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            input_schema: tool.parameters,
          })),
        }
      : {}),
    ...(budget >= MIN_THINKING_BUDGET ? { thinking: { type: 'enabled', budget_tokens: budget } } : {}),
    stream: true,
  };
}

/**
 * The messages, each tool result joined to the user message its round's results make. An assistant
 * message with nothing to say is left out: the API refuses empty text, and joins consecutive messages
 * of one role itself.
 */
function conversation(messages: readonly ConversationMessage[]): Record<string, unknown>[] {
  const sent: Record<string, unknown>[] = [];
  let results: Record<string, unknown>[] | null = null;
  for (const message of messages) {
    if (message.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: message.toolCallId, content: message.content };
      if (results === null) {
        results = [block];
        sent.push({ role: 'user', content: results });
      } else results.push(block);
      continue;
    }
    results = null;
    if (message.role === 'user') {
      sent.push({ role: 'user', content: message.content });
      continue;
    }
    const content = assistantBlocks(message);
    if (content.length > 0) sent.push({ role: 'assistant', content });
  }
  return sent;
}

function assistantBlocks(
  message: Extract<ConversationMessage, { role: 'assistant' }>,
): Record<string, unknown>[] {
  const carried = message.carry?.api === 'messages' ? message.carry.parts : null;
  if (carried === null) {
    return [
      ...(message.content !== '' ? [textBlock(message.content)] : []),
      ...message.toolCalls.map(toolUse),
    ];
  }
  return carried.flatMap((part) => {
    if (part.kind === 'reasoning') return [{ ...part.item }];
    if (part.kind === 'text') return part.text !== '' ? [textBlock(part.text)] : [];
    const call = message.toolCalls[part.index];
    return call ? [toolUse(call)] : [];
  });
}

function textBlock(text: string): Record<string, unknown> {
  return { type: 'text', text };
}

/** A call as a `tool_use` block; its input is its arguments when they are a JSON object, else `{}`. */
function toolUse(call: ToolCall): Record<string, unknown> {
  let input: unknown = {};
  try {
    const parsed: unknown = JSON.parse(call.arguments);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) input = parsed;
  } catch {}
  return { type: 'tool_use', id: call.id, name: call.name, input };
}

/**
 * The request's headers: the configured ones, `anthropic-version`, then the key as the provider takes it.
 * Header values are never logged or echoed: they may be secrets.
 */
export function messagesRequestHeaders(
  apiKey: string | null,
  extra: Readonly<Record<string, string>>,
  options: Pick<MessagesRequestOptions, 'version' | 'auth'>,
): Record<string, string> {
  const headers = new Map([
    ['content-type', 'application/json'],
    ['accept', 'text/event-stream'],
  ]);
  for (const [name, value] of Object.entries(extra)) headers.set(name.toLowerCase(), value);
  if (!headers.has('anthropic-version')) headers.set('anthropic-version', options.version);
  if (apiKey !== null) {
    if (options.auth === 'bearer') headers.set('authorization', `Bearer ${apiKey}`);
    else headers.set('x-api-key', apiKey);
  }
  return Object.fromEntries(headers);
}
