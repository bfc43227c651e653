import { type Clock, deadlineAt } from '../clock.js';
import { PROVIDER_LIMITS } from '../limits.js';
import type { ChatProvider, ProviderEvent, ProviderRequest, ProviderRound } from './chat-provider.js';
import { HttpPoster, type PostResponse } from './http-post.js';
import { ProviderError, type ProviderFailure } from './provider-error.js';
import type { ProviderLimits } from './provider-limits.js';
import { RequestAbort } from './request-abort.js';
import {
  isRetryableStatus,
  NO_RETRY_HINT,
  type RetryHint,
  readRetryHint,
  retryDelayMs,
} from './retry-policy.js';

/** A retry about to happen, for the log: the failed attempt's kind and status, never its text. */
export interface RetryNotice {
  /** The attempt that failed, 1 for the first request. */
  attempt: number;
  delayMs: number;
  kind: ProviderFailure;
  status: number | null;
}

/** A key, or how to read it: a function is asked at every round, so a new key applies at once. */
export type ApiKeySource = string | null | (() => string | null | Promise<string | null>);

/** What every streaming adapter takes, whatever its API. */
export interface StreamingOptions {
  apiKey: ApiKeySource;
  clock: Clock;
  /** Replaces some of `PROVIDER_LIMITS` (tests shorten them). */
  limits?: Partial<ProviderLimits>;
  /** Draws the backoff jitter, in [0, 1). */
  random?: () => number;
  /** Told of each retry once its wait has begun. */
  onRetry?: (notice: RetryNotice) => void;
}

/** One round's request as an API shapes it. */
export interface PreparedRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/** Reads one response body into a round (`event-stream-reader.ts` for every API here). */
export interface RoundReader {
  push(bytes: Uint8Array): void;
  /** The stream said it was over: nothing after it is read. */
  readonly done: boolean;
  end(): ProviderRound;
}

type AttemptOutcome =
  | { round: ProviderRound }
  | { error: ProviderError; retryable: boolean; hint: RetryHint };

/** An error thrown by the caller's `onEvent`, carried out of the stream reading to be rethrown as is. */
class ConsumerRefusal {
  constructor(readonly error: unknown) {}
}

/**
 * A `ChatProvider` over a streaming HTTP API, over `node:http`; an API gives the request and the reader.
 *
 * Each attempt has its own AbortController, aborted by the caller's signal, by an idle watchdog that
 * every received chunk of bytes resets (keep-alive comments included) and by a deadline. A failed attempt
 * is retried only while nothing has reached `onEvent`: network failures, retryable statuses and a stream
 * that reports the provider overloaded, after the server's hint or an exponential backoff. Redirects are
 * not followed, so the conversation and the headers go only to the configured URL.
 */
export abstract class StreamingProvider implements ChatProvider {
  protected readonly limits: ProviderLimits;
  readonly #options: StreamingOptions;
  readonly #random: () => number;
  readonly #http = new HttpPoster();

  constructor(options: StreamingOptions) {
    this.#options = options;
    this.limits = { ...PROVIDER_LIMITS, ...options.limits };
    this.#random = options.random ?? Math.random;
  }

  /** The round's request, with the key read for it (null: none). */
  protected abstract prepare(request: ProviderRequest, apiKey: string | null): PreparedRequest;

  /** A reader of one attempt's body, emitting to `emit`. */
  protected abstract reader(emit: (event: ProviderEvent) => void): RoundReader;

  async complete(request: ProviderRequest, onEvent: (event: ProviderEvent) => void): Promise<ProviderRound> {
    const { apiKey } = this.#options;
    // A token source may refresh first (an OAuth access token about to expire).
    const prepared = this.prepare(request, typeof apiKey === 'function' ? await apiKey() : apiKey);
    let outputStarted = false;
    const emit = (event: ProviderEvent): void => {
      outputStarted = true;
      try {
        onEvent(event);
      } catch (error) {
        throw new ConsumerRefusal(error);
      }
    };
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#attempt(prepared, request.signal, emit);
      if ('round' in outcome) return outcome.round;
      const retryable = outcome.hint.shouldRetry ?? outcome.retryable;
      if (!retryable || outputStarted || attempt >= this.limits.attempts) throw outcome.error;
      const delayMs = retryDelayMs(attempt - 1, outcome.hint, this.#random, {
        backoffBaseMs: this.limits.backoff_base_ms,
        backoffCapMs: this.limits.backoff_cap_ms,
        backoffJitter: this.limits.backoff_jitter,
        hintCapMs: this.limits.retry_hint_cap_ms,
      });
      const pause = sleep(this.#options.clock, delayMs, request.signal);
      this.#options.onRetry?.({ attempt, delayMs, kind: outcome.error.kind, status: outcome.error.status });
      await pause;
    }
  }

  async #attempt(
    prepared: PreparedRequest,
    signal: AbortSignal,
    emit: (event: ProviderEvent) => void,
  ): Promise<AttemptOutcome> {
    if (signal.aborted) return failed('cancelled');
    const clock = this.#options.clock;
    const abort = new RequestAbort(signal);
    const after = (ms: number, why: ProviderFailure) =>
      deadlineAt(clock, clock.now() + ms, () => abort.abort(why));
    let idle = after(this.limits.idle_timeout_ms, 'idle_timeout');
    const touch = () => {
      idle.cancel();
      idle = after(this.limits.idle_timeout_ms, 'idle_timeout');
    };
    const deadline = after(this.limits.request_deadline_ms, 'deadline');
    try {
      let response: PostResponse;
      try {
        response = await this.#http.post(prepared.url, prepared.headers, prepared.body, abort.signal);
      } catch {
        return abort.cause === null ? failed('unreachable', true) : failed(abort.cause);
      }
      touch();
      if (response.status < 200 || response.status > 299) {
        const hint = readRetryHint(response.headers(), clock.wallNow());
        response.finish();
        return {
          error: new ProviderError('http_status', response.status),
          retryable: isRetryableStatus(response.status),
          hint,
        };
      }
      const reader = this.reader(emit);
      try {
        for await (const bytes of response.body) {
          touch();
          reader.push(bytes);
          if (reader.done) break;
        }
        response.finish();
        return { round: reader.end() };
      } catch (error) {
        response.finish();
        if (error instanceof ConsumerRefusal) throw error.error;
        if (abort.cause !== null) return failed(abort.cause);
        if (error instanceof ProviderError) {
          return { error, retryable: error.kind === 'overloaded', hint: NO_RETRY_HINT };
        }
        // The connection broke in the middle of the body.
        return failed('truncated', true);
      }
    } finally {
      idle.cancel();
      deadline.cancel();
      abort.dispose();
    }
  }
}

function failed(kind: ProviderFailure, retryable = false): AttemptOutcome {
  return { error: new ProviderError(kind), retryable, hint: NO_RETRY_HINT };
}

/** Waits `ms` on the clock; rejects as `cancelled` as soon as the signal aborts. */
function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancel = () => {
      timer.cancel();
      reject(new ProviderError('cancelled'));
    };
    const timer = deadlineAt(clock, clock.now() + ms, () => {
      signal.removeEventListener('abort', cancel);
      resolve();
    });
    signal.addEventListener('abort', cancel, { once: true });
  });
}

/** `{baseUrl}/{path}`, whether or not the base URL ends with a slash. */
export function endpointUrl(baseUrl: string, path: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/${path}`);
}
