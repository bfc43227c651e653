import t from 'tap';
import type { TokenSet } from '../../../core/auth/oauth-client.js';
import { REFRESH_MARGIN_MS, TokenRefresher } from '../../../core/auth/token-refresher.js';
import { fakeClock } from '../../helpers/fake-clock.js';

function harness(options: { fail?: boolean; commit?: boolean } = {}) {
  const clock = fakeClock();
  const requests: string[] = [];
  let release: () => void = () => {};
  let gate = new Promise<void>((resolve) => (release = resolve));
  const committed: TokenSet[] = [];
  const refresher = new TokenRefresher({
    clock,
    signal: new AbortController().signal,
    refresh: async (refreshToken) => {
      requests.push(refreshToken);
      await gate;
      if (options.fail) throw new Error('invalid_grant: the server said so');
      return {
        accessToken: `at-${requests.length}`,
        refreshToken: null,
        expiresAt: clock.wallNow() + 3_600_000,
      };
    },
    commit: async (_previous, next) => {
      committed.push(next);
      return options.commit ?? true;
    },
  });
  const open = () => {
    release();
    gate = new Promise<void>((resolve) => (release = resolve));
  };
  return { clock, refresher, requests, committed, open };
}

const tokens = (expiresAt: number | null, refreshToken: string | null = 'rt-1'): TokenSet => ({
  accessToken: 'at-0',
  refreshToken,
  expiresAt,
});

t.test('a fresh token is used as it is; one due within the margin is refreshed', async (t) => {
  const h = harness();
  const now = h.clock.wallNow();
  t.equal(await h.refresher.accessToken(tokens(now + REFRESH_MARGIN_MS + 1)), 'at-0');
  t.equal(await h.refresher.accessToken(tokens(null)), 'at-0', 'no expiry, no refresh');
  t.equal(h.requests.length, 0);
  const due = tokens(now + REFRESH_MARGIN_MS);
  const pending = h.refresher.accessToken(due);
  h.open();
  t.equal(await pending, 'at-1');
  t.same(h.requests, ['rt-1']);
  t.equal(h.committed[0]!.refreshToken, null, 'as the server answered; the store keeps the old one');
});

t.test('concurrent requests share one refresh', async (t) => {
  const h = harness();
  const due = tokens(h.clock.wallNow() - 1);
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

t.test('a failed refresh sends the old token, marks the failure, and a success clears it', async (t) => {
  const h = harness({ fail: true });
  const due = tokens(h.clock.wallNow() - 1);
  const pending = h.refresher.accessToken(due);
  h.open();
  t.equal(await pending, 'at-0');
  t.ok(h.refresher.failed);
  t.ok(h.refresher.expired(due));
  t.notOk(h.refresher.expired(tokens(h.clock.wallNow() + 1)));
  h.refresher.reset();
  t.notOk(h.refresher.failed);
});

t.test('a refresh whose credential changed meanwhile is not used', async (t) => {
  const h = harness({ commit: false });
  const pending = h.refresher.accessToken(tokens(h.clock.wallNow() - 1));
  h.open();
  t.equal(await pending, 'at-0');
  t.notOk(h.refresher.failed);
});

t.test('without a refresh token an expired token is sent as it is', async (t) => {
  const h = harness();
  t.equal(await h.refresher.accessToken(tokens(h.clock.wallNow() - 1, null)), 'at-0');
  t.equal(h.requests.length, 0);
});
