import type { ProviderEvent, ProviderRound, ProviderUsage } from '../chat-provider.js';
import { eventObject, text } from '../event-data.js';
import type { StreamAssembler } from '../event-stream-reader.js';
import { ProviderError } from '../provider-error.js';
import type { RoundOutputBounds } from '../provider-limits.js';
import { appendWithin } from '../reasoning-summaries.js';
import { count, isRecord, RoundOutput } from '../round-output.js';

interface OpenCall {
  index: number;
  /** Arguments arrived in deltas: the `.done` event and the finished item only restate them. */
  argued: boolean;
}

interface Summary {
  key: string;
  text: string;
  truncated: boolean;
}

/**
 * One round of OpenAI's Responses API, from its stream's events to the finished round. Each event's data
 * carries its `type` (the `event:` line repeats it; servers that leave out `output_index` or
 * `sequence_number` are read the same). Answer text is `response.output_text.delta` (and a refusal's
 * text); calls are `function_call` output items, their arguments from `response.function_call_arguments`
 * events keyed by item; reasoning summaries are `response.reasoning_summary_text` events, read only when
 * the provider is configured for them, each handed out whole once its part is done; raw reasoning
 * (`response.reasoning_text.delta`) is reasoning, never a summary. A reasoning item that comes with
 * `encrypted_content` is carried into the next round as it came. `response.completed` and
 * `response.incomplete` end the stream; `response.failed` and `error` are failures.
 */
export class ResponsesAssembler implements StreamAssembler {
  readonly #output: RoundOutput;
  readonly #calls = new Map<string, OpenCall>();
  #events = 0;
  #finishReason: string | null = null;
  #usage: ProviderUsage | null = null;
  #summary: Summary | null = null;
  /** A reasoning item of the round came encrypted: summaries completed after it are marked redacted. */
  #withheld = false;

  constructor(emit: (event: ProviderEvent) => void, bounds: RoundOutputBounds) {
    this.#output = new RoundOutput(emit, bounds);
  }

  event(type: string | undefined, data: string, cutByEnd: boolean): boolean {
    const event = eventObject(data, cutByEnd);
    this.#events++;
    const kind = typeof event.type === 'string' ? event.type : type;
    switch (kind) {
      case 'error':
      case 'response.failed':
        throw new ProviderError('in_band_error');
      case 'response.output_item.added':
        this.#itemAdded(event);
        return false;
      case 'response.output_item.done':
        this.#itemDone(event);
        return false;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        this.#summaryComplete();
        this.#output.text(text(event.delta));
        return false;
      case 'response.function_call_arguments.delta':
        this.#arguments(event, text(event.delta), true);
        return false;
      case 'response.function_call_arguments.done':
        this.#arguments(event, text(event.arguments), false);
        return false;
      case 'response.reasoning_summary_text.delta':
        this.#summaryDelta(event);
        return false;
      case 'response.reasoning_summary_text.done':
        this.#summaryDone(event);
        return false;
      case 'response.reasoning_text.delta':
        this.#output.reasoning(text(event.delta));
        return false;
      case 'response.completed':
        this.#end(event, null);
        return true;
      case 'response.incomplete':
        this.#end(event, 'incomplete');
        return true;
      default:
        return false;
    }
  }

  finish(sawEnd: boolean): ProviderRound {
    if (this.#events === 0) throw new ProviderError('empty_response');
    if (!sawEnd) throw new ProviderError('truncated');
    this.#summaryComplete();
    return this.#output.round('responses', this.#finishReason, this.#usage);
  }

  #itemAdded(event: Record<string, unknown>): void {
    const item = isRecord(event.item) ? event.item : {};
    if (item.type === 'function_call') {
      this.#summaryComplete();
      const initial = text(item.arguments);
      const index = this.#output.openCall(nonEmpty(item.call_id), nonEmpty(item.name), initial);
      const call = { index, argued: initial !== '' };
      for (const key of itemKeys(item.id, event.output_index)) this.#calls.set(key, call);
    } else {
      this.#output.breakText();
    }
  }

  #itemDone(event: Record<string, unknown>): void {
    const item = isRecord(event.item) ? event.item : {};
    if (item.type === 'function_call') {
      const call = this.#call(item.id, event.output_index);
      if (!call.argued) this.#output.callArguments(call.index, text(item.arguments));
      call.argued = true;
    } else if (item.type === 'reasoning') {
      this.#summaryComplete();
      if (typeof item.encrypted_content === 'string' && item.encrypted_content !== '') {
        this.#withheld = true;
        this.#output.carryReasoning({ ...item });
      }
    }
  }

  /** A fragment (`delta`), or the whole arguments once they are done, used only when no fragment came. */
  #arguments(event: Record<string, unknown>, value: string, fragment: boolean): void {
    const call = this.#call(event.item_id, event.output_index);
    if (!fragment && call.argued) return;
    this.#output.callArguments(call.index, value);
    if (value !== '') call.argued = true;
  }

  #call(itemId: unknown, outputIndex: unknown): OpenCall {
    for (const key of itemKeys(itemId, outputIndex)) {
      const call = this.#calls.get(key);
      if (call) return call;
    }
    // Arguments of a call that never began.
    throw new ProviderError('malformed_stream');
  }

  #summaryDelta(event: Record<string, unknown>): void {
    const delta = text(event.delta);
    this.#output.reasoning(delta);
    if (!this.#output.readsSummaries) return;
    const key = `${text(event.item_id)}:${String(event.summary_index ?? '')}`;
    if (this.#summary !== null && this.#summary.key !== key) this.#summaryComplete();
    const summary = this.#summary ?? { key, text: '', truncated: false };
    this.#summary = { key, ...appendWithin(summary, delta, this.#output.summaryChars) };
  }

  /** The part's text is whole: what its deltas gave, or the done event's text when none came. */
  #summaryDone(event: Record<string, unknown>): void {
    if (!this.#output.readsSummaries) return;
    const key = `${text(event.item_id)}:${String(event.summary_index ?? '')}`;
    if (this.#summary === null || this.#summary.key !== key) {
      this.#summaryComplete();
      const whole = text(event.text);
      this.#output.reasoning(whole);
      this.#summary = {
        key,
        ...appendWithin({ text: '', truncated: false }, whole, this.#output.summaryChars),
      };
    }
    this.#summaryComplete();
  }

  #summaryComplete(): void {
    const summary = this.#summary;
    this.#summary = null;
    if (summary) this.#output.summary(summary.text, summary.truncated, this.#withheld);
  }

  #end(event: Record<string, unknown>, incomplete: 'incomplete' | null): void {
    const response = isRecord(event.response) ? event.response : {};
    if (isRecord(response.usage)) {
      const usage = response.usage;
      this.#usage = {
        promptTokens: count(usage.input_tokens),
        completionTokens: count(usage.output_tokens),
        totalTokens: count(usage.total_tokens),
      };
    }
    if (incomplete !== null) {
      const details = isRecord(response.incomplete_details) ? response.incomplete_details : {};
      this.#finishReason = nonEmpty(details.reason) ?? incomplete;
    } else {
      this.#finishReason = this.#calls.size > 0 ? 'tool_calls' : 'stop';
    }
  }
}

/** The keys a call is found by: its item id, and its output index where the server sends one. */
function itemKeys(itemId: unknown, outputIndex: unknown): string[] {
  const keys: string[] = [];
  if (typeof itemId === 'string' && itemId !== '') keys.push(`id:${itemId}`);
  if (typeof outputIndex === 'number') keys.push(`index:${outputIndex}`);
  return keys;
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
