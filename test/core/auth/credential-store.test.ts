import t from 'tap';
import { CredentialStore } from '../../../core/auth/credential-store.js';
import type { TokenSet } from '../../../core/auth/oauth-client.js';
import { CredentialExpired, TokenRefresher } from '../../../core/auth/token-refresher.js';
import { WireError } from '../../../core/errors.js';
import { fakeClock } from '../../helpers/fake-clock.js';

function store(options: { environmentKey?: string | null; storedKey?: string | null; failWrites?: boolean }) {
  const writes: string[] = [];
  let removals = 0;
  const credentials = new CredentialStore({
    environmentKey: options.environmentKey ?? null,
    storedKey: options.storedKey ?? null,
    persistence: {
      write: async (apiKey) => {
        if (options.failWrites) throw new Error('disk full');
        writes.push(apiKey);
      },
      writeTokens: async () => {
        throw new Error('not used here');
      },
      remove: async () => {
        removals++;
        return true;
      },
    },
  });
  return { credentials, writes, removals: () => removals };
}

t.test('the environment key wins over the stored one', async (t) => {
  const { credentials } = store({ environmentKey: 'env-key', storedKey: 'stored-key' });
  t.equal(credentials.apiKey(), 'env-key');
  t.same(credentials.readiness(), { ready: true, method: 'env' });
  t.same(await credentials.logout(), { removed: true, ready: true, method: 'env' });
  t.equal(credentials.apiKey(), 'env-key', 'a logout never removes the environment key');
});

t.test('a login is written before it is used; a logout forgets it', async (t) => {
  const { credentials, writes, removals } = store({});
  t.same(credentials.readiness(), { ready: false, method: null });
  t.equal(credentials.apiKey(), null);
  t.same(await credentials.login('sk-new'), { ready: true, method: 'stored' });
  t.same(writes, ['sk-new']);
  t.equal(credentials.apiKey(), 'sk-new');
  t.same(await credentials.logout(), { removed: true, ready: false, method: null });
  t.equal(removals(), 1);
  t.equal(credentials.apiKey(), null);
});

t.test('a login whose write fails changes nothing', async (t) => {
  const { credentials } = store({ storedKey: 'sk-old', failWrites: true });
  await t.rejects(credentials.login('sk-new'), { message: 'disk full' });
  t.equal(credentials.apiKey(), 'sk-old');
});

t.test('one login flow at a time', async (t) => {
  const { credentials } = store({});
  const end = credentials.beginLogin();
  t.throws(
    () => credentials.beginLogin(),
    new WireError('configuration_busy', 'another login is in progress'),
  );
  end();
  end();
  const next = credentials.beginLogin();
  t.throws(
    () => credentials.beginLogin(),
    { code: 'configuration_busy' },
    'a repeated end ends only its own flow',
  );
  next();
});

function oauthStore(options: {
  environmentKey?: string | null;
  tokens?: TokenSet | null;
  failTokenWrites?: boolean;
}) {
  const clock = fakeClock();
  const written: TokenSet[] = [];
  let releaseRemove: () => void = () => {};
  let holdRemove = false;
  const refresher = new TokenRefresher({
    clock,
    signal: new AbortController().signal,
    refresh: async () => {
      throw new Error('the server refused');
    },
    commit: (previous, next) => credentials.replaceTokens(previous, next),
  });
  const credentials: CredentialStore = new CredentialStore({
    environmentKey: options.environmentKey ?? null,
    storedKey: null,
    storedTokens: options.tokens ?? null,
    refresher,
    persistence: {
      write: async () => {},
      writeTokens: async (tokens) => {
        if (options.failTokenWrites) throw new Error('disk full');
        written.push(tokens);
      },
      remove: async () => {
        if (holdRemove) await new Promise<void>((resolve) => (releaseRemove = resolve));
        return true;
      },
    },
  });
  return {
    clock,
    credentials,
    written,
    holdRemoves: () => {
      holdRemove = true;
    },
    releaseRemove: () => releaseRemove(),
  };
}

const TOKENS: TokenSet = { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: Date.UTC(2026, 0, 1, 1) };

t.test('stored OAuth tokens are the key; the environment still wins', async (t) => {
  const { credentials } = oauthStore({ tokens: TOKENS });
  t.same(credentials.readiness(), { ready: true, method: 'oauth' });
  t.equal(await credentials.token(), 'at-1');
  const env = oauthStore({ tokens: TOKENS, environmentKey: 'env-key' }).credentials;
  t.equal(await env.token(), 'env-key');
  t.same(env.readiness(), { ready: true, method: 'env' });
});

t.test('readiness reads the stored expiry only: refresh_failed and token_expired', async (t) => {
  // 30 s left when the daemon starts: due for a refresh 22.5 s later, and the server refuses it.
  const expiring = oauthStore({ tokens: { ...TOKENS, expiresAt: Date.UTC(2026, 0, 1, 0, 0, 30) } });
  t.same(expiring.credentials.readiness(), { ready: true, method: 'oauth' }, 'before any refresh');
  t.equal(await expiring.credentials.token(), 'at-1', 'fresh: no refresh');
  expiring.clock.advance(25_000);
  t.equal(await expiring.credentials.token(), 'at-1', 'a failed refresh sends the token while it is valid');
  t.same(expiring.credentials.readiness(), { ready: true, method: 'oauth' }, 'which is still usable');
  expiring.clock.advance(5_000);
  await t.rejects(expiring.credentials.token(), CredentialExpired, 'once expired it is never sent');
  t.same(expiring.credentials.readiness(), { ready: false, method: 'oauth', reason: 'refresh_failed' });
  const noRefresh = oauthStore({ tokens: { ...TOKENS, refreshToken: null } });
  t.same(noRefresh.credentials.readiness(), { ready: true, method: 'oauth' });
  noRefresh.clock.advance(3_600_000);
  t.same(noRefresh.credentials.readiness(), { ready: false, method: 'oauth', reason: 'token_expired' });
  await t.rejects(noRefresh.credentials.token(), CredentialExpired);
  t.same(await noRefresh.credentials.storeTokens(TOKENS), { ready: true, method: 'oauth' }, 'a new login');
});

t.test('without a refresher, stored tokens are used until they expire', async (t) => {
  const clock = fakeClock();
  const credentials = new CredentialStore({
    environmentKey: null,
    storedKey: null,
    storedTokens: TOKENS,
    clock,
    persistence: {
      write: async () => {},
      writeTokens: async () => {},
      remove: async () => true,
    },
  });
  t.equal(await credentials.token(), 'at-1');
  clock.advance(3_600_000);
  await t.rejects(credentials.token(), CredentialExpired);
  t.same(credentials.readiness(), { ready: false, method: 'oauth', reason: 'token_expired' });
});

t.test('a refresh finishing during a logout is not written back', async (t) => {
  const h = oauthStore({ tokens: TOKENS });
  h.holdRemoves();
  const logout = h.credentials.logout();
  const replaced = h.credentials.replaceTokens(TOKENS, { ...TOKENS, accessToken: 'at-2' });
  // The removal has begun and holds; the replacement waits behind it.
  await new Promise((resolve) => setImmediate(resolve));
  h.releaseRemove();
  t.same(await logout, { removed: true, ready: false, method: null });
  t.equal(await replaced, false);
  t.same(h.written, [], 'nothing written after the removal');
  t.equal(await h.credentials.token(), null);
});

t.test('a token store that fails keeps the old credential', async (t) => {
  const h = oauthStore({ tokens: TOKENS, failTokenWrites: true });
  await t.rejects(h.credentials.storeTokens({ ...TOKENS, accessToken: 'at-new' }));
  t.equal(await h.credentials.token(), 'at-1');
});
