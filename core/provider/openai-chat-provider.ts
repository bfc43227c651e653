import type { ProviderEvent, ProviderRequest } from './chat-provider.js';
import { type ChatRequestOptions, chatRequestBody, chatRequestHeaders } from './chat-request.js';
import { EventStreamReader } from './event-stream-reader.js';
import { roundBounds } from './provider-limits.js';
import { RoundAssembler } from './round-assembler.js';
import {
  endpointUrl,
  type PreparedRequest,
  type RoundReader,
  type StreamingOptions,
  StreamingProvider,
} from './streaming-provider.js';

export type { ProviderLimits } from './provider-limits.js';
export type { RetryNotice } from './streaming-provider.js';

export interface OpenAiChatProviderOptions extends ChatRequestOptions, StreamingOptions {
  /** E.g. `http://127.0.0.1:8080/v1`; requests go to `{baseUrl}/chat/completions`. */
  baseUrl: string;
  /** Sent with every request; values may be secrets. */
  headers: Readonly<Record<string, string>>;
  /**
   * The provider sends reasoning summaries in its documented `reasoning_details` field (configured, never
   * guessed): only then are they read, as `reasoning_summary` events.
   */
  reasoningSummary?: boolean;
}

/** A `ChatProvider` over the OpenAI-compatible Chat Completions streaming API (`POST …/chat/completions`). */
export class OpenAiChatProvider extends StreamingProvider {
  readonly #options: OpenAiChatProviderOptions;
  readonly #url: URL;

  constructor(options: OpenAiChatProviderOptions) {
    super(options);
    this.#options = options;
    this.#url = endpointUrl(options.baseUrl, 'chat/completions');
  }

  protected prepare(request: ProviderRequest, apiKey: string | null): PreparedRequest {
    return {
      url: this.#url,
      headers: chatRequestHeaders(apiKey, this.#options.headers),
      body: JSON.stringify(chatRequestBody(request, this.#options)),
    };
  }

  protected reader(emit: (event: ProviderEvent) => void): RoundReader {
    const { limits } = this;
    const assembler = new RoundAssembler(emit, roundBounds(limits, this.#options.reasoningSummary === true));
    return new EventStreamReader(assembler, {
      responseBytes: limits.response_bytes,
      eventChars: limits.event_chars,
    });
  }
}
