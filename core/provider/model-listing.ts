import { type Clock, deadlineAt } from '../clock.js';
import { ProviderError } from './provider-error.js';
import { RequestAbort } from './request-abort.js';

export interface ModelListingOptions {
  /** Requests go to `{baseUrl}/models`. */
  baseUrl: string;
  /** The bearer key, asked at every listing. */
  apiKey: () => string | null | Promise<string | null>;
  /** The request's headers with the key (null: none), as the provider's API sends them; values may be secrets. */
  headers: (apiKey: string | null) => Record<string, string>;
  clock: Clock;
  /** The longest the whole listing may take, from the request to the last byte. */
  deadlineMs: number;
  /** Bytes of the answer read before it is refused as too large. */
  responseBytes: number;
}

/**
 * `GET {baseUrl}/models` (OpenAI's APIs and Anthropic's answer it alike): the answer's JSON, unjudged. One request, no retry
 * (a refresh is asked for by a person, who can ask again), no redirect. Failures are `ProviderError`s:
 * the kind and the HTTP status only, never the provider's text.
 */
export class ModelListing {
  readonly #options: ModelListingOptions;
  readonly #url: string;

  constructor(options: ModelListingOptions) {
    this.#options = options;
    this.#url = `${options.baseUrl.replace(/\/+$/, '')}/models`;
  }

  async list(signal: AbortSignal): Promise<unknown> {
    const { clock } = this.#options;
    if (signal.aborted) throw new ProviderError('cancelled');
    const abort = new RequestAbort(signal);
    const deadline = deadlineAt(clock, clock.now() + this.#options.deadlineMs, () => abort.abort('deadline'));
    try {
      const headers = this.#options.headers(await this.#options.apiKey());
      delete headers['content-type'];
      headers.accept = 'application/json';
      let response: Response;
      try {
        response = await fetch(this.#url, { headers, signal: abort.signal, redirect: 'manual' });
      } catch {
        throw new ProviderError(abort.cause ?? 'unreachable');
      }
      if (response.status < 200 || response.status > 299) {
        abort.abort('http_status');
        throw new ProviderError('http_status', response.status);
      }
      const text = await this.#readBody(response, abort);
      try {
        return JSON.parse(text);
      } catch {
        throw new ProviderError('malformed_listing');
      }
    } finally {
      deadline.cancel();
      abort.dispose();
    }
  }

  async #readBody(response: Response, abort: RequestAbort): Promise<string> {
    if (response.body === null) throw new ProviderError('malformed_listing');
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    try {
      for await (const chunk of response.body) {
        bytes += chunk.byteLength;
        if (bytes > this.#options.responseBytes) {
          abort.abort('too_large');
          throw new ProviderError('too_large');
        }
        chunks.push(chunk);
      }
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw new ProviderError(abort.cause ?? 'truncated');
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
    } catch {
      throw new ProviderError('malformed_listing');
    }
  }
}
