import t from 'tap';
import { PROVIDER_LIMITS } from '../../../core/limits.js';
import {
  isRetryableStatus,
  NO_RETRY_HINT,
  type RetryBounds,
  readRetryHint,
  retryDelayMs,
} from '../../../core/provider/retry-policy.js';

const BOUNDS: RetryBounds = {
  backoffBaseMs: PROVIDER_LIMITS.backoff_base_ms,
  backoffCapMs: PROVIDER_LIMITS.backoff_cap_ms,
  backoffJitter: PROVIDER_LIMITS.backoff_jitter,
  hintCapMs: PROVIDER_LIMITS.retry_hint_cap_ms,
};
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

const hint = (headers: Record<string, string>) => readRetryHint(new Headers(headers), NOW);

t.test('the bounds are those documented', async (t) => {
  t.same(BOUNDS, { backoffBaseMs: 500, backoffCapMs: 8_000, backoffJitter: 0.25, hintCapMs: 30_000 });
  t.equal(PROVIDER_LIMITS.attempts, 5);
});

t.test('retryable statuses: 408, 409, 429 and every status from 500', async (t) => {
  for (const status of [408, 409, 429, 500, 502, 503, 504, 529, 599])
    t.ok(isRetryableStatus(status), `${status}`);
  for (const status of [300, 400, 401, 403, 404, 405, 413, 422, 499])
    t.notOk(isRetryableStatus(status), `${status}`);
});

t.test('exponential backoff: 0.5 s doubling, capped at 8 s, less up to a quarter of jitter', async (t) => {
  const none = () => 0;
  t.same(
    [0, 1, 2, 3, 4, 5, 10].map((retry) => retryDelayMs(retry, NO_RETRY_HINT, none, BOUNDS)),
    [500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000],
  );
  const most = () => 0.999_999;
  t.same(
    [0, 1, 4].map((retry) => retryDelayMs(retry, NO_RETRY_HINT, most, BOUNDS)),
    [375, 750, 6_000],
  );
  t.equal(
    retryDelayMs(2, NO_RETRY_HINT, () => 0.5, BOUNDS),
    1_750,
  );
});

t.test('retry-after-ms comes first, in milliseconds', async (t) => {
  t.same(hint({ 'retry-after-ms': '1500', 'retry-after': '9' }), { shouldRetry: null, delayMs: 1_500 });
  t.same(hint({ 'retry-after-ms': '12.3' }).delayMs, 13);
  t.same(
    hint({ 'retry-after-ms': 'soon', 'retry-after': '2' }).delayMs,
    2_000,
    'an unreadable one is skipped',
  );
});

t.test('retry-after in seconds or as an HTTP date', async (t) => {
  t.equal(hint({ 'retry-after': '3' }).delayMs, 3_000);
  t.equal(hint({ 'retry-after': ' 0.5 ' }).delayMs, 500);
  t.equal(hint({ 'retry-after': new Date(NOW + 7_000).toUTCString() }).delayMs, 7_000);
  t.equal(hint({ 'retry-after': 'Thursday, 01-Jan-26 12:00:04 GMT' }).delayMs, 4_000, 'RFC 850 form');
  t.equal(hint({ 'retry-after': 'Thu Jan  1 12:00:02 2026' }).delayMs, 2_000, 'asctime form, in GMT');
  t.equal(hint({ 'retry-after': new Date(NOW - 60_000).toUTCString() }).delayMs, 0, 'a past date is now');
  t.equal(hint({ 'retry-after': 'tomorrow-ish' }).delayMs, null);
  t.equal(hint({ 'retry-after': 'Monday, sometime' }).delayMs, null);
  t.equal(hint({ 'retry-after': '-3' }).delayMs, null);
  t.equal(hint({}).delayMs, null);
});

t.test('x-should-retry says yes, no, or nothing', async (t) => {
  t.equal(hint({ 'x-should-retry': 'true' }).shouldRetry, true);
  t.equal(hint({ 'x-should-retry': 'false' }).shouldRetry, false);
  t.equal(hint({ 'x-should-retry': 'maybe' }).shouldRetry, null);
  t.equal(hint({}).shouldRetry, null);
});

t.test('a hint is used exactly, without jitter, up to its cap', async (t) => {
  const random = () => 0.9;
  t.equal(retryDelayMs(0, { shouldRetry: null, delayMs: 2_345 }, random, BOUNDS), 2_345);
  t.equal(retryDelayMs(3, { shouldRetry: null, delayMs: 0 }, random, BOUNDS), 0);
  t.equal(retryDelayMs(0, { shouldRetry: null, delayMs: 30_001 }, random, BOUNDS), 30_000);
  t.equal(retryDelayMs(0, hint({ 'retry-after': '86400' }), random, BOUNDS), 30_000);
});
