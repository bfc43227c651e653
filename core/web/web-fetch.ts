import { lookup as dnsLookup } from 'node:dns/promises';
import type { IncomingMessage } from 'node:http';
import { type Clock, deadlineAt } from '../clock.js';
import { RequestAbort } from '../provider/request-abort.js';
import { fitTextInJson } from '../tool-results/fitted-json.js';
import { decodeBody, readBounded } from './bounded-text.js';
import {
  checkUrl,
  type FetchTarget,
  type ResolvedAddress,
  resolveTarget,
  type TargetPolicy,
} from './fetch-target.js';
import { pinnedGet } from './pinned-get.js';
import { isPrivateAddress, isPublicAddress } from './public-address.js';
import { textContent } from './text-content-type.js';
import { type WebFetchOutcome, webFetchFailure } from './web-fetch-error.js';
import { WEB_FETCH_LIMITS } from './web-fetch-limits.js';

export { isPrivateAddress, isPublicAddress } from './public-address.js';
export type { WebFetchError, WebFetchOutcome } from './web-fetch-error.js';
export { WEB_FETCH_MESSAGES } from './web-fetch-error.js';
export { WEB_FETCH_LIMITS } from './web-fetch-limits.js';

export interface WebFetchOptions {
  clock: Clock;
  /**
   * Only public addresses are connected to, unless this is true: then loopback, private, link-local,
   * carrier-grade NAT and unique local addresses too (`isPrivateAddress`).
   */
  allowPrivateAddresses: boolean;
  /** The whole fetch, redirects included. */
  timeoutMs?: number;
  /** Bytes of the body read at most; the rest is not read. */
  downloadBytes?: number;
  /** UTF-8 bytes of the result given to the model, as compact JSON; the text is cut between characters to fit. */
  outputBytes?: number;
  maxRedirects?: number;
  /** Test seams: name resolution, and which addresses count as public (private ones are judged apart). */
  lookup?: (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;
  isPublicAddress?: (address: string) => boolean;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Sent with every request; nothing a server sent earlier (a cookie) and no credentials are ever added. */
const REQUEST_HEADERS = {
  'user-agent': 'magid',
  accept:
    'text/html, text/plain;q=0.9, text/*;q=0.8, application/json;q=0.8, application/xhtml+xml;q=0.8, application/xml;q=0.7, */*;q=0.1',
  'accept-encoding': 'identity',
} as const;

async function systemLookup(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
}

/**
 * The `web_fetch` tool's GET: one URL, redirects followed with every hop checked again, text only, within
 * one deadline and fixed bounds. Every failure is a code with fixed text.
 */
export class WebFetcher {
  readonly #clock: Clock;
  readonly #policy: TargetPolicy;
  readonly #timeoutMs: number;
  readonly #downloadBytes: number;
  readonly #outputBytes: number;
  readonly #maxRedirects: number;

  constructor(options: WebFetchOptions) {
    this.#clock = options.clock;
    const isPublic = options.isPublicAddress ?? isPublicAddress;
    this.#policy = {
      lookup: options.lookup ?? systemLookup,
      isAllowedAddress: options.allowPrivateAddresses
        ? (address) => isPublic(address) || isPrivateAddress(address)
        : isPublic,
    };
    this.#timeoutMs = options.timeoutMs ?? WEB_FETCH_LIMITS.timeout_ms;
    this.#downloadBytes = options.downloadBytes ?? WEB_FETCH_LIMITS.download_bytes;
    this.#outputBytes = options.outputBytes ?? WEB_FETCH_LIMITS.output_bytes;
    this.#maxRedirects = options.maxRedirects ?? WEB_FETCH_LIMITS.max_redirects;
  }

  /** A GET of `url`; never rejects. Aborting `signal` answers `cancelled` at once and aborts the request. */
  async fetch(url: string, signal: AbortSignal): Promise<WebFetchOutcome> {
    if (signal.aborted) return webFetchFailure('cancelled');
    const abort = new RequestAbort(signal);
    const clock = this.#clock;
    const deadline = deadlineAt(clock, clock.now() + this.#timeoutMs, () => abort.abort('deadline'));
    // The DNS lookup cannot be aborted, nor a body read be relied on to end at once: the outcome is
    // settled by the abort itself, and the work left behind stops at its next step.
    const stopped = new Promise<WebFetchOutcome>((resolve) => {
      abort.signal.addEventListener('abort', () =>
        resolve(webFetchFailure(abort.cause === 'deadline' ? 'timed_out' : 'cancelled')),
      );
    });
    try {
      const work = this.#follow(url, abort.signal).catch(() => webFetchFailure('internal_error'));
      return await Promise.race([work, stopped]);
    } finally {
      deadline.cancel();
      abort.dispose();
      // Whatever is still open (a lookup, a connection) is abandoned and its connection closed.
      abort.abort('cancelled');
    }
  }

  async #follow(first: string, signal: AbortSignal): Promise<WebFetchOutcome> {
    let next = first;
    for (let redirects = 0; ; redirects++) {
      const url = checkUrl(next);
      if (typeof url === 'string') return webFetchFailure(url);
      const target = await resolveTarget(url, this.#policy);
      if (!('addresses' in target)) return target;
      if (signal.aborted) return webFetchFailure('cancelled');
      let response: IncomingMessage;
      try {
        response = await pinnedGet(target, REQUEST_HEADERS, signal);
      } catch {
        return webFetchFailure('unreachable');
      }
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location !== undefined) {
        response.destroy();
        if (redirects === this.#maxRedirects) return webFetchFailure('too_many_redirects');
        const resolved = URL.parse(location, url.href);
        if (resolved === null) return webFetchFailure('invalid_url');
        next = resolved.href;
        continue;
      }
      return this.#read(target, status, response);
    }
  }

  async #read(target: FetchTarget, status: number, response: IncomingMessage): Promise<WebFetchOutcome> {
    if (status < 200 || status > 299) {
      response.destroy();
      return webFetchFailure('http_status');
    }
    const text = textContent(response.headers['content-type']);
    // identity was asked for: a compressed body would read as garbage text.
    const encoding = response.headers['content-encoding']?.trim().toLowerCase();
    if (text === null || (encoding !== undefined && encoding !== '' && encoding !== 'identity')) {
      response.destroy();
      return webFetchFailure('not_text');
    }
    let body: Awaited<ReturnType<typeof readBounded>>;
    try {
      body = await readBounded(response, this.#downloadBytes);
    } catch {
      return webFetchFailure('unreachable');
    } finally {
      response.destroy();
    }
    // The bound is the result's encoded size: a page of quotes or control bytes is cut shorter.
    const fitted = fitTextInJson(decodeBody(text.decoder, body), this.#outputBytes, (content, truncated) => ({
      url: target.url.href,
      status,
      content_type: text.contentType,
      content,
      truncated: truncated || body.longer,
    }));
    return { ok: true, output: fitted.json };
  }
}
