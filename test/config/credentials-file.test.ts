import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  credentialsPath,
  readStoredApiKey,
  removeStoredApiKey,
  writeStoredApiKey,
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
