import { PROVIDER_LIMITS } from '../limits.js';
import type { ToolCallBounds } from './tool-call-accumulator.js';

/** The bounds of `PROVIDER_LIMITS`, as an adapter holds them (tests shorten some). */
export type ProviderLimits = { -readonly [Bound in keyof typeof PROVIDER_LIMITS]: number };

/** What one round keeps, each bound on its own. */
export interface RoundBounds extends ToolCallBounds {
  /** UTF-8 bytes of answer text; past them the round fails as too large. */
  textBytes: number;
  /** Characters kept of one reasoning summary, or null not to read summaries at all. */
  summaryChars: number | null;
}

/** What one round keeps of an API whose reasoning is carried into the next round. */
export interface RoundOutputBounds extends RoundBounds {
  /** UTF-8 bytes, as JSON, of the reasoning a round carries into the next; past them it fails as too large. */
  carriedBytes: number;
}

/** The round bounds of `limits`; summaries are read only when `summaries` says the provider sends them. */
export function roundBounds(limits: ProviderLimits = PROVIDER_LIMITS, summaries = false): RoundBounds {
  return {
    textBytes: limits.text_bytes,
    runCalls: limits.tool_calls_per_round,
    listedCalls: limits.listed_tool_calls_per_round,
    callArgumentBytes: limits.call_argument_bytes,
    roundArgumentBytes: limits.round_argument_bytes,
    summaryChars: summaries ? limits.reasoning_summary_chars : null,
  };
}

/** The round bounds of `limits` with the reasoning a round may carry. */
export function roundOutputBounds(limits: ProviderLimits, summaries: boolean): RoundOutputBounds {
  return { ...roundBounds(limits, summaries), carriedBytes: limits.carried_bytes };
}
