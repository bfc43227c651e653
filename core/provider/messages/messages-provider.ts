import type { ProviderEvent, ProviderRequest } from '../chat-provider.js';
import { EventStreamReader } from '../event-stream-reader.js';
import { roundOutputBounds } from '../provider-limits.js';
import {
  endpointUrl,
  type PreparedRequest,
  type RoundReader,
  type StreamingOptions,
  StreamingProvider,
} from '../streaming-provider.js';
import { MessagesAssembler } from './messages-assembler.js';
import {
  type MessagesRequestOptions,
  messagesRequestBody,
  messagesRequestHeaders,
} from './messages-request.js';

export interface MessagesProviderOptions extends MessagesRequestOptions, StreamingOptions {
  /** E.g. `https://api.anthropic.com/v1`; requests go to `{baseUrl}/messages`. */
  baseUrl: string;
  /** Sent with every request; values may be secrets. */
  headers: Readonly<Record<string, string>>;
}

/**
 * A `ChatProvider` over Anthropic's Messages API (`POST …/messages`, streamed): the same transport,
 * retries and bounds as every API, with the Messages request and stream. HTTP 529 and an in-stream
 * `overloaded_error` before any output are retried like a 5xx.
 */
export class MessagesProvider extends StreamingProvider {
  readonly #options: MessagesProviderOptions;
  readonly #url: URL;

  constructor(options: MessagesProviderOptions) {
    super(options);
    this.#options = options;
    this.#url = endpointUrl(options.baseUrl, 'messages');
  }

  protected prepare(request: ProviderRequest, apiKey: string | null): PreparedRequest {
    return {
      url: this.#url,
      headers: messagesRequestHeaders(apiKey, this.#options.headers, this.#options),
      body: JSON.stringify(messagesRequestBody(request, this.#options)),
    };
  }

  protected reader(emit: (event: ProviderEvent) => void): RoundReader {
    const { limits } = this;
    // Thinking is never read as a summary: the API does not mark it as one.
    const assembler = new MessagesAssembler(emit, roundOutputBounds(limits, false));
    return new EventStreamReader(assembler, {
      responseBytes: limits.response_bytes,
      eventChars: limits.event_chars,
    });
  }
}
