import type { ProviderEvent, ProviderRequest, ProviderRound } from '../../../core/provider/chat-provider.js';
import {
  OpenAiChatProvider,
  type OpenAiChatProviderOptions,
  type RetryNotice,
} from '../../../core/provider/openai-chat-provider.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';
import { ScriptedProvider } from '../../helpers/scripted-provider.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

export interface ProviderFixture {
  server: ScriptedProvider;
  clock: FakeClock;
  provider: OpenAiChatProvider;
  /** Every retry, in order. Unless told otherwise, each wait is passed at once on the fake clock. */
  retries: RetryNotice[];
  /** One round of `request()`; events are collected. */
  run(overrides?: Partial<ProviderRequest>, onEvent?: (event: ProviderEvent) => void): Promise<ProviderRound>;
  events: ProviderEvent[];
}

const MODEL = 'scripted-model';

export function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    selection: { model: MODEL, reasoningEffort: null, fast: false },
    system: null,
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

/**
 * A provider adapter against a scripted server, with a fake clock and no jitter, so that every wait
 * is exact. `earlyMs` makes the clock run its timers that much early, as Node's may.
 */
export async function providerFixture(
  t: Tap,
  options: Partial<OpenAiChatProviderOptions> & { passWaits?: boolean; earlyMs?: number } = {},
): Promise<ProviderFixture> {
  const { passWaits = true, earlyMs = 0, ...overrides } = options;
  const server = await ScriptedProvider.start(t);
  const clock = fakeClock({ earlyMs });
  const retries: RetryNotice[] = [];
  const events: ProviderEvent[] = [];
  const provider = new OpenAiChatProvider({
    baseUrl: server.baseUrl,
    apiKey: null,
    headers: {},
    streamUsage: true,
    assistantToolCallContent: 'empty',
    clock,
    random: () => 0,
    onRetry: (notice) => {
      retries.push(notice);
      if (passWaits) clock.advance(notice.delayMs);
    },
    ...overrides,
  });
  return {
    server,
    clock,
    provider,
    retries,
    events,
    run: (requestOverrides = {}, onEvent = (event) => events.push(event)) =>
      provider.complete(request(requestOverrides), onEvent),
  };
}

/** Lets sockets and streams move (real I/O), without moving the fake clock. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}
