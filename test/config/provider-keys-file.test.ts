import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  PROVIDER_KEYS_FILE_NAME,
  ProviderKeysFile,
  readProviderKeys,
} from '../../config/provider-keys-file.js';

t.test(
  'keys by provider, written whole and private, read back; the last removed removes the file',
  async (t) => {
    const home = join(t.testdir(), 'home');
    const file = new ProviderKeysFile(home, {});
    await Promise.all([file.write('openai', 'sk-openai'), file.write('anthropic', 'sk-ant')]);
    const path = join(home, PROVIDER_KEYS_FILE_NAME);
    t.equal(statSync(path).mode & 0o777, 0o600);
    t.equal(statSync(home).mode & 0o777, 0o700);
    t.same(JSON.parse(readFileSync(path, 'utf8')), {
      providers: { openai: { api_key: 'sk-openai' }, anthropic: { api_key: 'sk-ant' } },
    });
    t.same(await readProviderKeys(home), { openai: 'sk-openai', anthropic: 'sk-ant' });
    t.equal(await file.remove('openai'), true);
    t.equal(await file.remove('openai'), false, 'twice is nothing');
    t.same(await readProviderKeys(home), { anthropic: 'sk-ant' });
    t.equal(await file.remove('anthropic'), true);
    t.notOk(existsSync(path));
  },
);

t.test('a file that cannot be understood holds no key', async (t) => {
  const home = t.testdir();
  for (const text of [
    'not json',
    'null',
    '{"providers":[1]}',
    '{"providers":{"a":{"api_key":7},"b":null}}',
  ]) {
    writeFileSync(join(home, PROVIDER_KEYS_FILE_NAME), text);
    t.same(await readProviderKeys(home), {}, text);
  }
  t.same(await readProviderKeys(join(home, 'absent')), {});
});
