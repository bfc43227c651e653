import t from 'tap';
import { CredentialStore } from '../../../core/auth/credential-store.js';
import { WireError } from '../../../core/errors.js';

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
