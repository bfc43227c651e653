import type {
  ChatProvider,
  ProviderEvent,
  ProviderRequest,
  ProviderRound,
} from '../../../core/provider/chat-provider.js';
import { MessagesProvider } from '../../../core/provider/messages/messages-provider.js';
import { OpenAiChatProvider } from '../../../core/provider/openai-chat-provider.js';
import type { ProviderLimits } from '../../../core/provider/provider-limits.js';
import { ResponsesProvider } from '../../../core/provider/responses/responses-provider.js';
import type { RetryNotice } from '../../../core/provider/streaming-provider.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';
import { ScriptedProvider } from '../../helpers/scripted-provider.js';
import { request } from './provider-fixture.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

export type ApiName = 'chat_completions' | 'responses' | 'messages';
export const APIS: readonly ApiName[] = ['chat_completions', 'responses', 'messages'];

export interface ApiFixture {
  server: ScriptedProvider;
  clock: FakeClock;
  provider: ChatProvider;
  retries: RetryNotice[];
  events: ProviderEvent[];
  run(overrides?: Partial<ProviderRequest>): Promise<ProviderRound>;
}

export interface ApiFixtureOptions {
  apiKey?: string | null;
  headers?: Record<string, string>;
  reasoningSummary?: boolean;
  limits?: Partial<ProviderLimits>;
  maxTokens?: number;
}

/** An adapter of `api` against a scripted server, with a fake clock whose retry waits pass at once. */
export async function apiFixture(t: Tap, api: ApiName, options: ApiFixtureOptions = {}): Promise<ApiFixture> {
  const server = await ScriptedProvider.start(t);
  const clock = fakeClock();
  const retries: RetryNotice[] = [];
  const events: ProviderEvent[] = [];
  const common = {
    baseUrl: server.baseUrl,
    apiKey: options.apiKey ?? null,
    headers: options.headers ?? {},
    clock,
    random: () => 0,
    limits: options.limits,
    onRetry: (notice: RetryNotice) => {
      retries.push(notice);
      clock.advance(notice.delayMs);
    },
  };
  const provider =
    api === 'chat_completions'
      ? new OpenAiChatProvider({
          ...common,
          streamUsage: true,
          assistantToolCallContent: 'empty',
          reasoningSummary: options.reasoningSummary ?? false,
        })
      : api === 'responses'
        ? new ResponsesProvider({ ...common, reasoningSummary: options.reasoningSummary ?? false })
        : new MessagesProvider({
            ...common,
            maxTokens: options.maxTokens ?? 4_096,
            modelMaxTokens: {},
            version: '2023-06-01',
            auth: 'x-api-key',
          });
  return {
    server,
    clock,
    provider,
    retries,
    events,
    run: (overrides = {}) => provider.complete(request(overrides), (event) => events.push(event)),
  };
}
