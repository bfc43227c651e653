import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ProviderEvent, ProviderRound } from './chat-provider.js';
import { ProviderError } from './provider-error.js';
import type { RoundBounds } from './provider-limits.js';
import { RoundAssembler } from './round-assembler.js';

export interface EventStreamBounds extends RoundBounds {
  /** Bytes of body one round may take. */
  responseBytes: number;
  /** Characters one event (its lines so far) may take before it ends. */
  eventChars: number;
}

/**
 * A response body, byte chunk by byte chunk, cut anywhere (inside a UTF-8 sequence, a field name or a
 * CRLF), read as server-sent events (comments, CRLF and multi-line data are the parser's) into a round.
 * `event: error`, an `error:` field and `data: {"error":…}` are the stream's own failure reports.
 */
export class EventStreamReader {
  readonly #assembler: RoundAssembler;
  readonly #parser: EventSourceParser;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  readonly #maxBytes: number;
  #bytes = 0;
  #done = false;
  #cutByEnd = false;

  constructor(emit: (event: ProviderEvent) => void, bounds: EventStreamBounds) {
    this.#assembler = new RoundAssembler(emit, bounds);
    this.#maxBytes = bounds.responseBytes;
    this.#parser = createParser({
      maxBufferSize: bounds.eventChars,
      onEvent: (message) => {
        if (this.#done) return;
        if (message.event === 'error') throw new ProviderError('in_band_error');
        if (message.event !== undefined && message.event !== 'message') return;
        this.#done = this.#assembler.data(message.data, this.#cutByEnd);
      },
      onError: (error) => {
        if (error.type === 'unknown-field' && error.field === 'error')
          throw new ProviderError('in_band_error');
        if (error.type === 'max-buffer-size-exceeded') throw new ProviderError('too_large');
      },
    });
  }

  /** The `[DONE]` sentinel arrived: nothing after it is read. */
  get done(): boolean {
    return this.#done;
  }

  push(bytes: Uint8Array): void {
    if (this.#done) return;
    this.#bytes += bytes.byteLength;
    if (this.#bytes > this.#maxBytes) throw new ProviderError('too_large');
    let text: string;
    try {
      text = this.#decoder.decode(bytes, { stream: true });
    } catch {
      throw new ProviderError('malformed_stream');
    }
    this.#parser.feed(text);
  }

  /** The body ended (or `[DONE]` came): the finished round, or why there is none. */
  end(): ProviderRound {
    if (!this.#done) {
      let tail: string;
      try {
        tail = this.#decoder.decode();
      } catch {
        throw new ProviderError('truncated');
      }
      // Servers may end the body without the blank line after the last event: it still counts.
      this.#cutByEnd = true;
      this.#parser.feed(`${tail}\n\n`);
    }
    return this.#assembler.finish(this.#done);
  }
}
