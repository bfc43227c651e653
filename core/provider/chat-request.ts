import type { ConversationMessage, ProviderRequest } from './chat-provider.js';

/** How the request is shaped for a given server; the defaults suit every server the notes measured. */
export interface ChatRequestOptions {
  /** Asks for the final `usage` chunk (`stream_options.include_usage`); some servers refuse the member. */
  streamUsage: boolean;
  /**
   * The `content` of an assistant message that only calls tools: `""` (llama-cpp-python answers 500 to
   * null) or `null` (for servers that refuse an empty string).
   */
  assistantToolCallContent: 'empty' | 'null';
}

/**
 * The body of `POST {baseUrl}/chat/completions`. It names no `tool_choice` and no
 * `parallel_tool_calls`: several servers mishandle both, and leaving them out means "auto" everywhere.
 * The model, reasoning effort and fast mode are the turn's selection; unset ones are left out.
 */
export function chatRequestBody(
  request: ProviderRequest,
  options: ChatRequestOptions,
): Record<string, unknown> {
  const messages: Record<string, unknown>[] = [];
  // `system`, never `developer`, which some local chat templates do not know.
  if (request.system !== null && request.system !== '') {
    messages.push({ role: 'system', content: request.system });
  }
  for (const message of request.messages) messages.push(chatMessage(message, options));
  const { selection } = request;
  return {
    model: selection.model,
    ...(selection.reasoningEffort !== null ? { reasoning_effort: selection.reasoningEffort } : {}),
    ...(selection.fast ? { service_tier: 'priority' } : {}),
    messages,
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          })),
        }
      : {}),
    stream: true,
    ...(options.streamUsage ? { stream_options: { include_usage: true } } : {}),
  };
}

function chatMessage(message: ConversationMessage, options: ChatRequestOptions): Record<string, unknown> {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant':
      if (message.toolCalls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content:
          message.content !== '' ? message.content : options.assistantToolCallContent === 'null' ? null : '',
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: replayableArguments(call.arguments) },
        })),
      };
  }
}

/**
 * Arguments as they are sent back in a continuation: servers refuse a conversation whose earlier
 * arguments are not a JSON object, so arguments the model got wrong are replayed as `{}` (the call's
 * result says what went wrong).
 */
export function replayableArguments(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return text;
  } catch {}
  return '{}';
}

/**
 * The request's headers: the configured extra headers, then the bearer key when one is configured.
 * Header values are never logged or echoed: they may be secrets.
 */
export function chatRequestHeaders(
  apiKey: string | null,
  extra: Readonly<Record<string, string>>,
): Record<string, string> {
  const headers = new Map([
    ['content-type', 'application/json'],
    ['accept', 'text/event-stream'],
  ]);
  for (const [name, value] of Object.entries(extra)) headers.set(name.toLowerCase(), value);
  if (apiKey !== null) headers.set('authorization', `Bearer ${apiKey}`);
  return Object.fromEntries(headers);
}
