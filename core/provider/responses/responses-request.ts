import type { ConversationMessage, ProviderRequest, ToolCall } from '../chat-provider.js';
import { replayableArguments } from '../chat-request.js';
import type { ModelOptions } from '../provider-definition.js';

export interface ResponsesRequestOptions {
  /** Asks for reasoning summaries (`reasoning.summary: "auto"`), which the stream then carries. */
  reasoningSummary: boolean;
  /** Asks for reasoning encrypted (`include`), to carry it into the next round; absent: asked for. */
  encryptedReasoning?: boolean;
  /** By model id, what one model needs apart from these. */
  modelOptions?: Readonly<Record<string, ModelOptions>>;
}

/**
 * The body of `POST {baseUrl}/responses`. Nothing is stored at the provider (`store: false`): the whole
 * conversation goes in `input` every round, with the reasoning of the turn's earlier rounds as the
 * provider returned it (`include` asks for it encrypted, unless the model's settings say it does not
 * reason: such models refuse the member). Tools are function tools without strict
 * validation, which would refuse the schemas it cannot enforce. No `tool_choice`: the model decides.
 */
export function responsesRequestBody(
  request: ProviderRequest,
  options: ResponsesRequestOptions,
): Record<string, unknown> {
  const { selection } = request;
  const model = options.modelOptions?.[selection.model] ?? {};
  const summaries = model.reasoningSummary ?? options.reasoningSummary;
  const encrypted = model.encryptedReasoning ?? options.encryptedReasoning ?? true;
  const reasoning = {
    ...(selection.reasoningEffort !== null ? { effort: selection.reasoningEffort } : {}),
    ...(summaries ? { summary: 'auto' } : {}),
  };
  return {
    model: selection.model,
    ...(request.system !== null && request.system !== '' ? { instructions: request.system } : {}),
    input: request.messages.flatMap(inputItems),
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((tool) => ({
            type: 'function',
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
            strict: false,
          })),
        }
      : {}),
    ...(Object.keys(reasoning).length > 0 ? { reasoning } : {}),
    ...(selection.fast ? { service_tier: 'priority' } : {}),
    ...(encrypted ? { include: ['reasoning.encrypted_content'] } : {}),
    store: false,
    stream: true,
  };
}

function inputItems(message: ConversationMessage): Record<string, unknown>[] {
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: message.content }];
    case 'tool':
      return [{ type: 'function_call_output', call_id: message.toolCallId, output: message.content }];
    case 'assistant': {
      const carried = message.carry?.api === 'responses' ? message.carry.parts : null;
      if (carried === null) {
        return [
          ...(message.content !== '' ? [assistantText(message.content)] : []),
          ...message.toolCalls.map(functionCall),
        ];
      }
      return carried.flatMap((part) => {
        if (part.kind === 'reasoning') return [reasoningItem(part.item)];
        if (part.kind === 'text') return part.text !== '' ? [assistantText(part.text)] : [];
        const call = message.toolCalls[part.index];
        return call ? [functionCall(call)] : [];
      });
    }
  }
}

function assistantText(text: string): Record<string, unknown> {
  return { role: 'assistant', content: text };
}

function functionCall(call: ToolCall): Record<string, unknown> {
  return {
    type: 'function_call',
    call_id: call.id,
    name: call.name,
    arguments: replayableArguments(call.arguments),
  };
}

/** A reasoning item as it came, less its status: its id, summary, content and encrypted content. */
function reasoningItem(item: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { status: _status, ...sent } = item;
  return sent;
}
