import { createParser, type EventSourceParser } from 'eventsource-parser';
import type { ProviderRound } from './chat-provider.js';
import { ProviderError } from './provider-error.js';
import type { RoundReader } from './streaming-provider.js';

/** What an API makes of the events of its stream. */
export interface StreamAssembler {
  /**
   * One event: its `event:` type (undefined when it has none) and its data. Returns true when the event
   * ends the stream. `cutByEnd` says the data was completed by the end of the body rather than by a
   * blank line, so data that does not parse there is a truncation.
   */
  event(type: string | undefined, data: string, cutByEnd: boolean): boolean;
  /** The finished round at the end of the body; `sawEnd` when an event ended the stream. */
  finish(sawEnd: boolean): ProviderRound;
}

export interface EventStreamBounds {
  /** Bytes of body one round may take. */
  responseBytes: number;
  /** Characters one event (its lines so far) may take before it ends. */
  eventChars: number;
}

/**
 * A response body, byte chunk by byte chunk, cut anywhere (inside a UTF-8 sequence, a field name or a
 * CRLF), read as server-sent events (comments, CRLF and multi-line data are the parser's) and handed to an
 * API's assembler. An `error:` field is the stream's own failure report, whatever the API.
 */
export class EventStreamReader implements RoundReader {
  readonly #assembler: StreamAssembler;
  readonly #parser: EventSourceParser;
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });
  readonly #maxBytes: number;
  #bytes = 0;
  #done = false;
  #cutByEnd = false;

  constructor(assembler: StreamAssembler, bounds: EventStreamBounds) {
    this.#assembler = assembler;
    this.#maxBytes = bounds.responseBytes;
    this.#parser = createParser({
      maxBufferSize: bounds.eventChars,
      onEvent: (message) => {
        if (this.#done) return;
        this.#done = this.#assembler.event(message.event, message.data, this.#cutByEnd);
      },
      onError: (error) => {
        if (error.type === 'unknown-field' && error.field === 'error')
          throw new ProviderError('in_band_error');
        if (error.type === 'max-buffer-size-exceeded') throw new ProviderError('too_large');
      },
    });
  }

  /** The stream said it was over: nothing after it is read. */
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

  /** The body ended (or the stream said it was over): the finished round, or why there is none. */
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
