import type { ProviderEvent, ProviderRound, ProviderUsage } from '../chat-provider.js';
import { eventObject, text } from '../event-data.js';
import type { StreamAssembler } from '../event-stream-reader.js';
import { ProviderError } from '../provider-error.js';
import type { RoundOutputBounds } from '../provider-limits.js';
import { count, isRecord, RoundOutput } from '../round-output.js';

/** What a content block is to the round, by its index in the message. */
type Block =
  | { kind: 'text' }
  | { kind: 'call'; index: number }
  | { kind: 'thinking'; handle: number }
  | { kind: 'other' };

/**
 * One round of Anthropic's Messages API, from its stream's events to the finished round. Each event's data
 * carries its `type` (the `event:` line repeats it). `text_delta` is answer text; a `tool_use` block is a
 * call, its input streamed as `input_json_delta` fragments; a `thinking` block is reasoning, never answer
 * text and never a summary (the API does not mark it as one), kept with its `signature` to go back
 * unchanged in the next round, as is a `redacted_thinking` block. `message_stop` ends the stream (or the
 * end of the body after a `stop_reason`); `pause_turn` asks for the round back to continue; `ping` is a
 * keep-alive; an `error` event is a failure, and `overloaded_error` one that may be retried before any
 * output.
 */
export class MessagesAssembler implements StreamAssembler {
  readonly #output: RoundOutput;
  readonly #blocks = new Map<number, Block>();
  #started = false;
  #stopReason: string | null = null;
  #inputTokens: number | null = null;
  #outputTokens: number | null = null;

  constructor(emit: (event: ProviderEvent) => void, bounds: RoundOutputBounds) {
    this.#output = new RoundOutput(emit, bounds);
  }

  event(type: string | undefined, data: string, cutByEnd: boolean): boolean {
    const event = eventObject(data, cutByEnd);
    const kind = typeof event.type === 'string' ? event.type : type;
    switch (kind) {
      case 'error': {
        const error = isRecord(event.error) ? event.error : {};
        throw new ProviderError(error.type === 'overloaded_error' ? 'overloaded' : 'in_band_error');
      }
      case 'message_start':
        this.#start(event);
        return false;
      case 'content_block_start':
        this.#blockStart(event);
        return false;
      case 'content_block_delta':
        this.#blockDelta(event);
        return false;
      case 'message_delta':
        this.#messageDelta(event);
        return false;
      case 'message_stop':
        if (!this.#started) throw new ProviderError('malformed_stream');
        return true;
      default:
        // `ping`, `content_block_stop` and whatever the API adds.
        return false;
    }
  }

  finish(sawEnd: boolean): ProviderRound {
    if (!this.#started) throw new ProviderError('empty_response');
    if (!sawEnd && this.#stopReason === null) throw new ProviderError('truncated');
    const usage: ProviderUsage | null =
      this.#inputTokens === null && this.#outputTokens === null
        ? null
        : {
            promptTokens: this.#inputTokens,
            completionTokens: this.#outputTokens,
            totalTokens:
              this.#inputTokens !== null && this.#outputTokens !== null
                ? this.#inputTokens + this.#outputTokens
                : null,
          };
    const paused = this.#stopReason === 'pause_turn';
    return this.#output.round('messages', this.#stopReason, usage, { paused, carryAll: paused });
  }

  #start(event: Record<string, unknown>): void {
    this.#started = true;
    const message = isRecord(event.message) ? event.message : {};
    if (isRecord(message.usage)) {
      this.#inputTokens = count(message.usage.input_tokens);
      this.#outputTokens = count(message.usage.output_tokens);
    }
  }

  #blockStart(event: Record<string, unknown>): void {
    if (!this.#started) throw new ProviderError('malformed_stream');
    const at = blockIndex(event.index);
    const block = isRecord(event.content_block) ? event.content_block : {};
    this.#output.breakText();
    switch (block.type) {
      case 'text':
        this.#blocks.set(at, { kind: 'text' });
        this.#output.text(text(block.text));
        return;
      case 'tool_use': {
        // Its `input` is `{}` until the fragments arrive; a server that sends the whole input here is read.
        const input = isRecord(block.input) && Object.keys(block.input).length > 0 ? block.input : undefined;
        const index = this.#output.openCall(nonEmpty(block.id), nonEmpty(block.name), input);
        this.#blocks.set(at, { kind: 'call', index });
        return;
      }
      case 'thinking': {
        const thinking = text(block.thinking);
        const handle = this.#output.carryReasoning({
          type: 'thinking',
          thinking,
          signature: text(block.signature),
        });
        this.#output.reasoning(thinking);
        this.#blocks.set(at, { kind: 'thinking', handle });
        return;
      }
      case 'redacted_thinking':
        this.#output.carryReasoning({ type: 'redacted_thinking', data: text(block.data) });
        this.#output.reasoning('[redacted]');
        this.#blocks.set(at, { kind: 'other' });
        return;
      default:
        this.#blocks.set(at, { kind: 'other' });
    }
  }

  #blockDelta(event: Record<string, unknown>): void {
    const block = this.#blocks.get(blockIndex(event.index));
    const delta = isRecord(event.delta) ? event.delta : {};
    // A delta of a block that never started.
    if (block === undefined) throw new ProviderError('malformed_stream');
    switch (delta.type) {
      case 'text_delta':
        if (block.kind === 'text') this.#output.text(text(delta.text));
        return;
      case 'input_json_delta':
        if (block.kind === 'call') this.#output.callArguments(block.index, text(delta.partial_json));
        return;
      case 'thinking_delta':
        if (block.kind !== 'thinking') return;
        this.#output.extendReasoning(block.handle, 'thinking', text(delta.thinking));
        this.#output.reasoning(text(delta.thinking));
        return;
      case 'signature_delta':
        if (block.kind === 'thinking')
          this.#output.extendReasoning(block.handle, 'signature', text(delta.signature));
        return;
    }
  }

  #messageDelta(event: Record<string, unknown>): void {
    const delta = isRecord(event.delta) ? event.delta : {};
    const reason = nonEmpty(delta.stop_reason);
    if (reason !== null) this.#stopReason = reason;
    if (isRecord(event.usage)) {
      this.#outputTokens = count(event.usage.output_tokens) ?? this.#outputTokens;
      this.#inputTokens = count(event.usage.input_tokens) ?? this.#inputTokens;
    }
  }
}

function blockIndex(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new ProviderError('malformed_stream');
  }
  return value;
}

function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}
