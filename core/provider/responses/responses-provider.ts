import type { ProviderEvent, ProviderRequest } from '../chat-provider.js';
import { chatRequestHeaders } from '../chat-request.js';
import { EventStreamReader } from '../event-stream-reader.js';
import { roundOutputBounds } from '../provider-limits.js';
import {
  endpointUrl,
  type PreparedRequest,
  type RoundReader,
  type StreamingOptions,
  StreamingProvider,
} from '../streaming-provider.js';
import { ResponsesAssembler } from './responses-assembler.js';
import { type ResponsesRequestOptions, responsesRequestBody } from './responses-request.js';

export interface ResponsesProviderOptions extends ResponsesRequestOptions, StreamingOptions {
  /** E.g. `https://api.openai.com/v1`; requests go to `{baseUrl}/responses`. */
  baseUrl: string;
  /** Sent with every request; values may be secrets. */
  headers: Readonly<Record<string, string>>;
}

/**
 * A `ChatProvider` over OpenAI's Responses API (`POST …/responses`, streamed, nothing stored): the same
 * transport, retries and bounds as every API, with the Responses request and stream.
 */
export class ResponsesProvider extends StreamingProvider {
  readonly #options: ResponsesProviderOptions;
  readonly #url: URL;

  constructor(options: ResponsesProviderOptions) {
    super(options);
    this.#options = options;
    this.#url = endpointUrl(options.baseUrl, 'responses');
  }

  protected prepare(request: ProviderRequest, apiKey: string | null): PreparedRequest {
    return {
      url: this.#url,
      headers: chatRequestHeaders(apiKey, this.#options.headers),
      body: JSON.stringify(responsesRequestBody(request, this.#options)),
    };
  }

  protected reader(emit: (event: ProviderEvent) => void): RoundReader {
    const { limits } = this;
    const assembler = new ResponsesAssembler(emit, roundOutputBounds(limits, this.#options.reasoningSummary));
    return new EventStreamReader(assembler, {
      responseBytes: limits.response_bytes,
      eventChars: limits.responses_event_chars,
    });
  }
}
