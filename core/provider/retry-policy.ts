export interface RetryBounds {
  backoffBaseMs: number;
  backoffCapMs: number;
  /** The fraction of a backoff delay that jitter may take off. */
  backoffJitter: number;
  hintCapMs: number;
}

/** What a failed response's headers say about trying again; nothing else of the response is kept. */
export interface RetryHint {
  /** `x-should-retry`: true or false when the server decided, null when it did not say. */
  shouldRetry: boolean | null;
  /** The wait the server asked for (`retry-after-ms`, else `retry-after`), or null. */
  delayMs: number | null;
}

export const NO_RETRY_HINT: RetryHint = { shouldRetry: null, delayMs: null };

/** Timeouts, conflicts, rate limits and server errors (529 "overloaded" included) are worth retrying. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

const DECIMAL = /^\d+(\.\d+)?$/;
const HTTP_DATE_START = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/;

export function readRetryHint(headers: Headers, wallNow: number): RetryHint {
  const should = headers.get('x-should-retry');
  return {
    shouldRetry: should === 'true' ? true : should === 'false' ? false : null,
    delayMs: hintedDelayMs(headers, wallNow),
  };
}

function hintedDelayMs(headers: Headers, wallNow: number): number | null {
  const milliseconds = headers.get('retry-after-ms')?.trim();
  if (milliseconds !== undefined && DECIMAL.test(milliseconds)) return Math.ceil(Number(milliseconds));
  const after = headers.get('retry-after')?.trim();
  if (after === undefined) return null;
  if (DECIMAL.test(after)) return Math.ceil(Number(after) * 1000);
  // Every HTTP date form begins with the day's name (`Date.parse` alone reads "-3" as a year), and is in
  // GMT, which the asctime form leaves unsaid.
  if (!HTTP_DATE_START.test(after)) return null;
  const date = Date.parse(after.endsWith(' GMT') ? after : `${after} GMT`);
  return Number.isNaN(date) ? null : Math.max(0, date - wallNow);
}

/**
 * The wait before retry number `retry` (0 for the first): the server's hint, capped, or else an
 * exponential backoff from the base, capped, less a random part of up to the jitter fraction.
 */
export function retryDelayMs(
  retry: number,
  hint: RetryHint,
  random: () => number,
  bounds: RetryBounds,
): number {
  if (hint.delayMs !== null) return Math.min(hint.delayMs, bounds.hintCapMs);
  const backoff = Math.min(bounds.backoffBaseMs * 2 ** retry, bounds.backoffCapMs);
  return Math.round(backoff * (1 - bounds.backoffJitter * random()));
}
