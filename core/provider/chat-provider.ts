/**
 * The model provider as the turn engine sees it: a neutral conversation in, one streamed model round
 * out. Nothing here depends on a provider's wire format: `openai-chat-provider.ts` implements it over the
 * Chat Completions API, `responses/` over OpenAI's Responses API, `messages/` over Anthropic's Messages
 * API, and `provider-router.ts` sends each round to the provider its model names.
 */

/** A tool call the model asked for. */
export interface ToolCall {
  /** The provider's id of the call: nonempty, at most 128 bytes, unique within its round. */
  id: string;
  name: string;
  /** The arguments as the model wrote them, a JSON text (`{}` when none arrived); not checked here. */
  arguments: string;
  /**
   * The call passed a bound of its round and is answered to the model with an error, never run:
   * `round_calls` when it came after the calls a round runs, `arguments` when its arguments passed
   * their bound (none of them are kept: `arguments` is then `{}`).
   */
  exceeds?: 'round_calls' | 'arguments';
}

/**
 * One part of a round's output as its API returned it, in order: reasoning the API wants back unchanged
 * (an encrypted Responses reasoning item, a signed Messages thinking block), the round's text, or its call
 * number `index`.
 */
export type CarriedPart =
  | { kind: 'reasoning'; item: Readonly<Record<string, unknown>> }
  | { kind: 'text'; text: string }
  | { kind: 'call'; index: number };

/**
 * What an API needs of an earlier round of the same turn beyond its text and calls: its output as it came,
 * reasoning included. Only the adapter of that API reads it, to send it back in the next round; it is
 * never shown, logged, stored or carried past the turn.
 */
export interface RoundCarry {
  readonly api: 'responses' | 'messages';
  readonly parts: readonly CarriedPart[];
}

export type ConversationMessage =
  | { role: 'user'; content: string }
  /** An earlier round's answer: its text and the calls it asked for, in their order, and what it carries. */
  | { role: 'assistant'; content: string; toolCalls: readonly ToolCall[]; carry?: RoundCarry }
  /** The result of one call, an error's text included. */
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool the model may call; `parameters` is the tool's input JSON Schema. */
export interface FunctionTool {
  name: string;
  description: string;
  parameters: Readonly<Record<string, unknown>>;
}

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** The model settings a turn runs with: captured at its admission and kept for its whole life. */
export interface ModelSelection {
  model: string;
  /** Sent as `reasoning_effort`; null leaves it to the provider. */
  reasoningEffort: ReasoningEffort | null;
  /** Sent as `service_tier: "priority"`. */
  fast: boolean;
}

export interface ProviderRequest {
  selection: ModelSelection;
  /** The combined skill instructions, or null for none. */
  system: string | null;
  messages: readonly ConversationMessage[];
  tools: readonly FunctionTool[];
  /** Aborting it cancels the round: the HTTP request is aborted and `complete` rejects as `cancelled`. */
  signal: AbortSignal;
}

/**
 * What a round streams, in arrival order. Text deltas are the model's answer exactly as received;
 * reasoning deltas (a reasoning field, or `<think>` sections of the content) are never answer text.
 */
export type ProviderEvent =
  | { kind: 'text'; delta: string }
  | { kind: 'reasoning'; delta: string }
  /** The model began a tool call; the calls themselves are only final in the round. */
  | { kind: 'tool_call_started' }
  /**
   * A reasoning summary, read only from a field the provider documents as one and only when the
   * configuration says the provider sends it (see `reasoning-summaries.ts`); never generic reasoning text.
   * Whole, once its item is complete. `redacted`: the provider withheld reasoning in this round;
   * `truncated`: the summary outgrew what the adapter keeps of one.
   */
  | { kind: 'reasoning_summary'; text: string; redacted: boolean; truncated: boolean };

export interface ProviderUsage {
  promptTokens: number | null;
  completionTokens: number | null;
  totalTokens: number | null;
}

/**
 * A finished round. The model asked for tools when `toolCalls` is not empty, whatever `finishReason`
 * says (servers answer `stop` with calls).
 */
export interface ProviderRound {
  /** Every text delta, concatenated. */
  text: string;
  toolCalls: ToolCall[];
  finishReason: string | null;
  /** Token counts when the server reported them. */
  usage: ProviderUsage | null;
  /** The round's output as its API wants it back in the next round, when it has reasoning to carry. */
  carry?: RoundCarry;
  /**
   * The provider paused the round before its end and asks for it back as it is to continue (the Messages
   * API's `pause_turn`): the next round continues it, with no call to answer.
   */
  paused?: boolean;
}

export interface ChatProvider {
  /**
   * One model round: streams events to `onEvent` in arrival order and resolves with the finished round.
   * Rejects with a `ProviderError`, except that an error thrown by `onEvent` aborts the request and is
   * rethrown unchanged.
   */
  complete(request: ProviderRequest, onEvent: (event: ProviderEvent) => void): Promise<ProviderRound>;
}
