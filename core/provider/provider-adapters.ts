import type { ChatProvider } from './chat-provider.js';
import { MessagesProvider } from './messages/messages-provider.js';
import { OpenAiChatProvider } from './openai-chat-provider.js';
import type { ProviderDefinition } from './provider-definition.js';
import { ResponsesProvider } from './responses/responses-provider.js';
import type { StreamingOptions } from './streaming-provider.js';

/** The adapter of a provider definition's API. */
export function providerAdapter(definition: ProviderDefinition, common: StreamingOptions): ChatProvider {
  const shared = { ...common, baseUrl: definition.baseUrl, headers: definition.headers };
  switch (definition.api) {
    case 'chat_completions':
      return new OpenAiChatProvider({
        ...shared,
        streamUsage: definition.streamUsage,
        assistantToolCallContent: definition.assistantToolCallContent,
        reasoningSummary: definition.reasoningSummary,
      });
    case 'responses':
      return new ResponsesProvider({
        ...shared,
        reasoningSummary: definition.reasoningSummary,
        encryptedReasoning: definition.encryptedReasoning,
        modelOptions: definition.modelOptions,
      });
    case 'messages':
      return new MessagesProvider({
        ...shared,
        maxTokens: definition.maxTokens,
        modelMaxTokens: maxTokensByModel(definition),
        version: definition.anthropicVersion,
        auth: definition.auth,
      });
  }
}

function maxTokensByModel(definition: ProviderDefinition): Record<string, number> {
  const byModel: Record<string, number> = {};
  for (const [model, options] of Object.entries(definition.modelOptions)) {
    if (options.maxTokens !== undefined) byModel[model] = options.maxTokens;
  }
  return byModel;
}
