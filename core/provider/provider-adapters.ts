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
      return new ResponsesProvider({ ...shared, reasoningSummary: definition.reasoningSummary });
    case 'messages':
      return new MessagesProvider({
        ...shared,
        maxTokens: definition.maxTokens,
        modelMaxTokens: definition.modelMaxTokens,
        version: definition.anthropicVersion,
        auth: definition.auth,
      });
  }
}
