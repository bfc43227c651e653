import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  credentialsPath,
  readStoredApiKey,
  readStoredCredential,
  removeStoredApiKey,
  writeStoredApiKey,
  writeStoredTokens,
} from '../../config/credentials-file.js';

t.test('the key is stored in <home>/credentials.json, mode 0600, in a home made 0700', async (t) => {
  const home = join(t.testdir(), 'home');
  t.equal(await readStoredApiKey(home), null, 'nothing stored yet');
  await writeStoredApiKey(home, 'sk-stored-1');
  t.equal(credentialsPath(home), join(home, 'credentials.json'));
  t.equal(statSync(home).mode & 0o777, 0o700);
  t.equal(statSync(credentialsPath(home)).mode & 0o777, 0o600);
  t.same(JSON.parse(readFileSync(credentialsPath(home), 'utf8')), { api_key: 'sk-stored-1' });
  t.equal(await readStoredApiKey(home), 'sk-stored-1');
  t.equal(await removeStoredApiKey(home), true);
  t.equal(await removeStoredApiKey(home), false);
  t.equal(await readStoredApiKey(home), null);
});

t.test('a file that holds no usable key holds no key', async (t) => {
  const home = t.testdir();
  for (const text of ['not json', '{}', '{"api_key":""}', '{"api_key":42}', 'null', '[]']) {
    writeFileSync(credentialsPath(home), text);
    t.equal(await readStoredApiKey(home), null, text);
  }
});

t.test('removing the key removes a temporary copy of it too, with or without the file', async (t) => {
  const home = t.testdir({
    '.credentials.json.a1b2c3d4e5f6.tmp': '{"api_key":"sk-torn"}\n',
    '.settings.json.a1b2c3d4e5f6.tmp': '{}',
  });
  t.equal(await removeStoredApiKey(home), false, 'there was no key file');
  t.same(readdirSync(home), ['.settings.json.a1b2c3d4e5f6.tmp'], 'only the credentials temporary went');
});

t.test('OAuth tokens replace a key and are read back; a malformed token entry holds nothing', async (t) => {
  const home = join(t.testdir(), 'home');
  await writeStoredApiKey(home, 'sk-before');
  const tokens = { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: 1_767_229_200_000 };
  await writeStoredTokens(home, tokens);
  t.equal(statSync(credentialsPath(home)).mode & 0o777, 0o600);
  t.same(JSON.parse(readFileSync(credentialsPath(home), 'utf8')), {
    oauth: { access_token: 'at-1', refresh_token: 'rt-1', expires_at: 1_767_229_200_000 },
  });
  t.same(await readStoredCredential(home), { kind: 'oauth', tokens });
  t.equal(await readStoredApiKey(home), null, 'no key any more');
  await writeStoredTokens(home, { accessToken: 'at-2', refreshToken: null, expiresAt: null });
  t.same(await readStoredCredential(home), {
    kind: 'oauth',
    tokens: { accessToken: 'at-2', refreshToken: null, expiresAt: null },
  });
  for (const oauth of [
    null,
    {},
    { access_token: '' },
    { access_token: 'a', refresh_token: 3, expires_at: null },
    { access_token: 'a', refresh_token: null, expires_at: 1.5 },
  ]) {
    writeFileSync(credentialsPath(home), JSON.stringify({ oauth }));
    t.equal(await readStoredCredential(home), null, JSON.stringify(oauth));
  }
});
