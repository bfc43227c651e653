import { exceedsJsonDepth } from '../json-depth.js';
import { PROVIDER_LIMITS } from '../limits.js';
import type { ProviderEvent, ProviderRound, ProviderUsage } from './chat-provider.js';
import type { StreamAssembler } from './event-stream-reader.js';
import { ProviderError } from './provider-error.js';
import type { RoundBounds } from './provider-limits.js';
import { ReasoningSummaries } from './reasoning-summaries.js';
import { ThinkTagSplitter } from './think-tags.js';
import { ToolCallAccumulator } from './tool-call-accumulator.js';

/**
 * One Chat Completions round's chunks, from the `data` of each server-sent event to the finished round. It
 * is lenient about shape (empty chunks, null members, unknown keys are all fine) and strict about meaning:
 * an error in the stream, an empty stream and a stream that stops before its end are failures.
 */
export class RoundAssembler implements StreamAssembler {
  readonly #emit: (event: ProviderEvent) => void;
  readonly #calls: ToolCallAccumulator;
  readonly #think = new ThinkTagSplitter();
  #text = '';
  #textBytes = 0;
  readonly #maxTextBytes: number;
  #finishReason: string | null = null;
  #usage: ProviderUsage | null = null;
  #chunks = 0;
  /** Once a chunk carried `tool_calls`, the legacy `function_call` beside them is a duplicate. */
  #sawToolCalls = false;
  /** Null unless the provider is configured as sending documented reasoning summaries. */
  readonly #summaries: ReasoningSummaries | null;

  constructor(emit: (event: ProviderEvent) => void, bounds: RoundBounds) {
    this.#emit = emit;
    this.#calls = new ToolCallAccumulator(bounds);
    this.#maxTextBytes = bounds.textBytes;
    this.#summaries = bounds.summaryChars === null ? null : new ReasoningSummaries(bounds.summaryChars);
  }

  /** Events typed other than `message` are not chunks; `event: error` is the stream's failure report. */
  event(type: string | undefined, data: string, cutByEnd: boolean): boolean {
    if (type === 'error') throw new ProviderError('in_band_error');
    if (type !== undefined && type !== 'message') return false;
    return this.data(data, cutByEnd);
  }

  /**
   * One event's data; returns true for the `[DONE]` sentinel. `cutByEnd` says the data was completed by
   * the end of the stream rather than by a blank line, so unparsable data there is a truncation.
   */
  data(payload: string, cutByEnd = false): boolean {
    if (payload.trim() === '[DONE]') return true;
    let chunk: unknown;
    try {
      chunk = JSON.parse(payload);
    } catch {
      throw new ProviderError(cutByEnd ? 'truncated' : 'malformed_stream');
    }
    if (!isRecord(chunk) || exceedsJsonDepth(payload, PROVIDER_LIMITS.event_nesting_depth)) {
      throw new ProviderError('malformed_stream');
    }
    if (chunk.error !== undefined && chunk.error !== null) throw new ProviderError('in_band_error');
    this.#chunks++;
    if (isRecord(chunk.usage)) this.#usage = usageOf(chunk.usage);
    if (Array.isArray(chunk.choices)) {
      for (const choice of chunk.choices) {
        // Only one completion is ever asked for; a server numbering others is ignored for them.
        if (isRecord(choice) && (choice.index === undefined || choice.index === 0)) this.#choice(choice);
      }
    }
    return false;
  }

  /** The finished round at the end of the stream, after `[DONE]` or not. */
  finish(sawDone: boolean): ProviderRound {
    if (this.#chunks === 0) throw new ProviderError('empty_response');
    if (!sawDone && this.#finishReason === null) throw new ProviderError('truncated');
    const toolCalls = this.#calls.finish();
    this.#summaryComplete();
    for (const segment of this.#think.flush()) this.#content(segment.kind, segment.text);
    return { text: this.#text, toolCalls, finishReason: this.#finishReason, usage: this.#usage };
  }

  #choice(choice: Record<string, unknown>): void {
    const delta = isRecord(choice.delta) ? choice.delta : {};
    // Servers that send both fields send the same text in each.
    const reasoning = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
    if (reasoning !== null) this.#emit({ kind: 'reasoning', delta: reasoning });
    if (this.#summaries) {
      for (const summary of this.#summaries.push(delta.reasoning_details)) {
        this.#emit({ kind: 'reasoning_summary', ...summary });
      }
    }
    const content = nonEmpty(delta.content);
    const toolCalls = Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0;
    // A summary is complete once the answer or a call begins.
    if (content !== null || toolCalls || (!this.#sawToolCalls && isRecord(delta.function_call))) {
      this.#summaryComplete();
    }
    if (content !== null) {
      for (const segment of this.#think.push(content)) this.#content(segment.kind, segment.text);
    }
    let opened = 0;
    if (toolCalls) {
      this.#sawToolCalls = true;
      opened = this.#calls.addToolCalls(delta.tool_calls);
    } else if (!this.#sawToolCalls) {
      opened = this.#calls.addFunctionCall(delta.function_call);
    }
    for (let i = 0; i < opened; i++) this.#emit({ kind: 'tool_call_started' });
    const finishReason = nonEmpty(choice.finish_reason);
    if (finishReason === 'error') throw new ProviderError('in_band_error');
    if (finishReason !== null) this.#finishReason = finishReason;
  }

  #summaryComplete(): void {
    const summary = this.#summaries?.flush();
    if (summary) this.#emit({ kind: 'reasoning_summary', ...summary });
  }

  #content(kind: 'text' | 'reasoning', text: string): void {
    if (kind === 'text') {
      this.#textBytes += Buffer.byteLength(text);
      if (this.#textBytes > this.#maxTextBytes) throw new ProviderError('too_large');
      this.#text += text;
    }
    this.#emit({ kind, delta: text });
  }
}

function usageOf(usage: Record<string, unknown>): ProviderUsage {
  return {
    promptTokens: count(usage.prompt_tokens),
    completionTokens: count(usage.completion_tokens),
    totalTokens: count(usage.total_tokens),
  };
}

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
