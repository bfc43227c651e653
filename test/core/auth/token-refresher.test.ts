import t from 'tap';
import { OAuthFailure, type TokenSet } from '../../../core/auth/oauth-client.js';
import {
  CredentialExpired,
  REFRESH_BACKOFF,
  REFRESH_MARGIN_MS,
  type RefreshFailure,
  TokenRefresher,
} from '../../../core/auth/token-refresher.js';
import { fakeClock } from '../../helpers/fake-clock.js';

interface HarnessOptions {
  /** Whether the token endpoint refuses; a function decides per request (its index in). */
  fail?: boolean | ((index: number) => boolean);
  commit?: boolean | 'throw';
  /** Seconds the refreshed access tokens live. */
  lifetimeS?: number;
  random?: () => number;
  /** Answered at once instead of waiting for `open()`. */
  immediate?: boolean;
}

function harness(options: HarnessOptions = {}) {
  const clock = fakeClock();
  const requests: string[] = [];
  const failures: RefreshFailure[] = [];
  let release: () => void = () => {};
  let gate = new Promise<void>((resolve) => (release = resolve));
  const committed: TokenSet[] = [];
  const shutdown = new AbortController();
  const refresher = new TokenRefresher({
    clock,
    signal: shutdown.signal,
    random: options.random ?? (() => 0),
    onFailure: (failure) => failures.push(failure),
    refresh: async (refreshToken) => {
      requests.push(refreshToken);
      if (!options.immediate) await gate;
      const fail = typeof options.fail === 'function' ? options.fail(requests.length - 1) : options.fail;
      if (fail) throw new OAuthFailure('refresh_failed');
      return {
        accessToken: `at-${requests.length}`,
        refreshToken: `rt-${requests.length + 1}`,
        expiresAt: clock.wallNow() + (options.lifetimeS ?? 3_600) * 1_000,
      };
    },
    commit: async (_previous, next) => {
      if (options.commit === 'throw') throw new Error('disk full');
      committed.push(next);
      return options.commit ?? true;
    },
  });
  const open = () => {
    release();
    gate = new Promise<void>((resolve) => (release = resolve));
  };
  return { clock, refresher, requests, committed, failures, open, shutdown };
}

/** Tokens received now that live `lifetimeMs`. */
function received(
  h: ReturnType<typeof harness>,
  lifetimeMs: number | null,
  refreshToken: string | null = 'rt-1',
) {
  const tokens: TokenSet = {
    accessToken: 'at-0',
    refreshToken,
    expiresAt: lifetimeMs === null ? null : h.clock.wallNow() + lifetimeMs,
  };
  h.refresher.track(tokens);
  return tokens;
}

/** What a request is given: its token, or 'expired' when it is refused. */
async function tokenFor(refresher: TokenRefresher, tokens: TokenSet): Promise<string> {
  try {
    return await refresher.accessToken(tokens);
  } catch (error) {
    if (error instanceof CredentialExpired) return 'expired';
    throw error;
  }
}

t.test('the margin is a quarter of the lifetime, at most 60 s', async (t) => {
  const h = harness();
  t.equal(h.refresher.marginMs(received(h, 3_600_000)), REFRESH_MARGIN_MS, 'an hour: 60 s');
  t.equal(h.refresher.marginMs(received(h, 120_000)), 30_000, 'two minutes: 30 s');
  t.equal(h.refresher.marginMs(received(h, 60_000)), 15_000, 'a minute: 15 s');
  t.equal(h.refresher.marginMs(received(h, 30_000)), 7_500, '30 s: 7.5 s');
  const short = received(h, 30_000);
  h.clock.advance(22_499);
  t.notOk(h.refresher.due(short), 'a 30 s token is fresh for 22.5 s');
  h.clock.advance(1);
  t.ok(h.refresher.due(short));
  t.notOk(h.refresher.due(received(h, null)), 'no expiry, never due');
  const seenLate: TokenSet = {
    accessToken: 'at-0',
    refreshToken: 'rt-1',
    expiresAt: h.clock.wallNow() + 40_000,
  };
  t.equal(h.refresher.marginMs(seenLate), 10_000, 'tokens read at startup count from when first seen');
});

t.test('a fresh token is used as it is; a due one is refreshed', async (t) => {
  const h = harness();
  const hour = received(h, 3_600_000);
  t.equal(await h.refresher.accessToken(hour), 'at-0');
  t.equal(await h.refresher.accessToken(received(h, null)), 'at-0', 'no expiry, no refresh');
  t.equal(h.requests.length, 0);
  h.clock.advance(3_600_000 - REFRESH_MARGIN_MS);
  const pending = h.refresher.accessToken(hour);
  h.open();
  t.equal(await pending, 'at-1');
  t.same(h.requests, ['rt-1']);
  t.same(h.committed, [
    { accessToken: 'at-1', refreshToken: 'rt-2', expiresAt: h.clock.wallNow() + 3_600_000 },
  ]);
});

t.test('30 s tokens are refreshed once in 22.5 s, not before every request', async (t) => {
  const h = harness({ immediate: true, lifetimeS: 30 });
  let tokens = received(h, 30_000);
  const sent: string[] = [];
  // A request every second for ten minutes, each with the credential as the last refresh left it.
  for (let second = 0; second < 600; second++) {
    sent.push(await h.refresher.accessToken(tokens));
    tokens = h.committed.at(-1) ?? tokens;
    h.clock.advance(1_000);
  }
  // Due 22.5 s after it was received, each token is refreshed by the request of the 23rd second.
  t.equal(h.requests.length, Math.floor(599 / 23), `${h.requests.length} refreshes for 600 requests`);
  t.equal(new Set(sent).size, h.requests.length + 1, 'each token serves about 23 requests');
  t.same(h.failures, []);
});

t.test('concurrent requests share one refresh', async (t) => {
  const h = harness();
  const due = received(h, 0);
  const all = Promise.all([
    h.refresher.accessToken(due),
    h.refresher.accessToken(due),
    h.refresher.accessToken(due),
  ]);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(h.requests.length, 1, 'one request while the refresh runs');
  h.open();
  t.same(await all, ['at-1', 'at-1', 'at-1']);
});

t.test('a refusing token endpoint is asked again only after a doubling backoff', async (t) => {
  const h = harness({ fail: true, immediate: true });
  const expired = received(h, 0);
  const answers = new Set<string>();
  for (let second = 0; second < 600; second++) {
    answers.add(await tokenFor(h.refresher, expired));
    h.clock.advance(1_000);
  }
  t.same([...answers], ['expired'], 'no request ever carried the expired token');
  t.equal(h.requests.length, 6, 'at 0, 10, 30, 70, 150 and 310 s: six attempts for 600 requests');
  t.same(
    h.failures,
    [10_000, 20_000, 40_000, 80_000, 160_000, 320_000].map((wait, index) => ({
      code: 'refresh_failed',
      failures: index + 1,
      retry_in_ms: wait,
    })),
    'one failure told per refresh, with its code and backoff only',
  );
  t.ok(h.refresher.failed);
});

t.test('the backoff is jittered by up to half, and capped', async (t) => {
  const h = harness({ fail: true, immediate: true, random: () => 0.999 });
  const expired = received(h, 0);
  for (let attempt = 0; attempt < 12; attempt++) {
    await tokenFor(h.refresher, expired);
    h.clock.advance(h.failures.at(-1)!.retry_in_ms);
  }
  const waits = h.failures.map((failure) => failure.retry_in_ms);
  t.equal(waits[0], Math.round(REFRESH_BACKOFF.base_ms * (1 - 0.5 * 0.999)));
  t.equal(waits.at(-1), Math.round(REFRESH_BACKOFF.cap_ms * (1 - 0.5 * 0.999)), 'at the cap');
  t.equal(h.requests.length, 12, 'one attempt once each wait is over');
});

t.test(
  'while it backs off a token that has not expired is still sent, and refused once it has',
  async (t) => {
    const h = harness({ fail: (index) => index === 0, immediate: true });
    const hour = received(h, 3_600_000);
    h.clock.advance(3_600_000 - REFRESH_MARGIN_MS);
    t.equal(await tokenFor(h.refresher, hour), 'at-0', 'the refresh failed: the valid token is sent');
    t.equal(await tokenFor(h.refresher, hour), 'at-0', 'backing off: no attempt');
    t.equal(h.requests.length, 1);
    h.clock.advance(REFRESH_BACKOFF.base_ms - 1);
    t.equal(await tokenFor(h.refresher, hour), 'at-0');
    t.equal(h.requests.length, 1, 'not a millisecond early');
    h.clock.advance(1);
    t.equal(await tokenFor(h.refresher, hour), 'at-2', 'then one attempt, which succeeds');
    t.notOk(h.refresher.failed, 'a success clears the failure');
    const next = h.committed.at(-1)!;
    h.clock.advance(3_600_000 - REFRESH_MARGIN_MS);
    t.equal(await tokenFor(h.refresher, next), 'at-3', 'and the backoff: the next refresh is not delayed');
  },
);

t.test('reset forgets the backoff, and a refresh begun before it records nothing', async (t) => {
  const h = harness({ fail: true });
  const expired = received(h, 0);
  const first = tokenFor(h.refresher, expired);
  h.open();
  t.equal(await first, 'expired');
  t.ok(h.refresher.failed);
  h.refresher.reset();
  t.notOk(h.refresher.failed);
  const second = tokenFor(h.refresher, expired);
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(h.requests.length, 2, 'no backoff after a reset');
  h.refresher.reset();
  h.open();
  t.equal(await second, 'expired');
  t.notOk(h.refresher.failed, 'the failure of a refresh begun before the reset is not counted');
  t.equal(h.failures.length, 1);
});

t.test('a refresh whose tokens cannot be written fails as storage_failed', async (t) => {
  const h = harness({ commit: 'throw', immediate: true });
  t.equal(await tokenFor(h.refresher, received(h, 0)), 'expired');
  t.match(h.failures, [{ code: 'storage_failed', failures: 1 }]);
});

t.test('a refresh aborted by the shutdown is no failure', async (t) => {
  const h = harness({ fail: true });
  const pending = tokenFor(h.refresher, received(h, 0));
  h.shutdown.abort();
  h.open();
  t.equal(await pending, 'expired');
  t.same(h.failures, []);
});

t.test('a refresh whose credential changed meanwhile is not used', async (t) => {
  const h = harness({ commit: false });
  const pending = h.refresher.accessToken(received(h, 60_000));
  h.open();
  t.equal(await pending, 'at-0', 'the old one, still valid');
  t.notOk(h.refresher.failed);
});

t.test('without a refresh token a token is sent until it expires, then refused', async (t) => {
  const h = harness();
  const tokens = received(h, 30_000, null);
  t.equal(await tokenFor(h.refresher, tokens), 'at-0');
  h.clock.advance(30_000);
  t.equal(await tokenFor(h.refresher, tokens), 'expired');
  t.equal(h.requests.length, 0);
});
