import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  PrivateFileError,
  readTextFile,
  removePrivateFile,
  removeStaleTemporaries,
  writePrivateFile,
} from '../../config/private-file.js';

t.test('a write creates the directory 0700 and the file 0600, and leaves no temporary file', async (t) => {
  const home = join(t.testdir(), 'home');
  const path = join(home, 'state.json');
  await writePrivateFile(path, '{"a":1}\n');
  t.equal(statSync(home).mode & 0o777, 0o700);
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.equal(readFileSync(path, 'utf8'), '{"a":1}\n');
  await writePrivateFile(path, '{"a":2}\n');
  t.equal(await readTextFile(path), '{"a":2}\n', 'a second write replaces the content');
  t.same(readdirSync(home), ['state.json'], 'only the file itself remains');
});

t.test('a replaced file keeps mode 0600 even when the old one was wider', async (t) => {
  const home = t.testdir();
  const path = join(home, 'state.json');
  writeFileSync(path, 'old');
  chmodSync(path, 0o644);
  await writePrivateFile(path, 'new');
  t.equal(statSync(path).mode & 0o777, 0o600);
});

t.test('a missing file reads as null and removes as false', async (t) => {
  const home = t.testdir();
  t.equal(await readTextFile(join(home, 'absent.json')), null);
  t.equal(await removePrivateFile(join(home, 'absent.json')), false);
  writeFileSync(join(home, 'present.json'), 'x');
  t.equal(await removePrivateFile(join(home, 'present.json')), true);
  t.same(readdirSync(home), []);
});

t.test('failures name the operation and the error code, never the path', async (t) => {
  const root = t.testdir({ 'not-a-directory': 'x' });
  const blocked = join(root, 'not-a-directory', 'secret-place', 'state.json');
  const write = await writePrivateFile(blocked, 'x').catch((error: unknown) => error);
  t.type(write, PrivateFileError);
  t.match(write, { code: 'ENOTDIR', message: 'a daemon file could not be written (ENOTDIR)' });
  t.notMatch(String((write as Error).stack), /secret-place|not-a-directory/);

  mkdirSync(join(root, 'a-directory'));
  const read = await readTextFile(join(root, 'a-directory')).catch((error: unknown) => error);
  t.match(read, { name: 'PrivateFileError', message: 'a daemon file could not be read (EISDIR)' });
  const remove = await removePrivateFile(join(root, 'a-directory')).catch((error: unknown) => error);
  t.match(remove, { name: 'PrivateFileError', code: /^E/ });
  t.notMatch(String((remove as Error).message), /a-directory/);
});

t.test('stale temporaries of the named files are removed, and nothing else', async (t) => {
  const home = t.testdir({
    'credentials.json': '{"api_key":"k"}\n',
    '.credentials.json.0123456789ab.tmp': '{"api_key":"secret"}\n',
    '.settings.json.ffffffffffff.tmp': '{}',
    '.settings.json.fffffffffff.tmp': 'eleven digits',
    '.settings.json.FFFFFFFFFFFF.tmp': 'upper case',
    '.notes.json.0123456789ab.tmp': 'another file',
    'credentials.json.0123456789ab.tmp': 'no leading dot',
  });
  t.equal(await removeStaleTemporaries(home, ['credentials.json', 'settings.json']), 2);
  t.same(readdirSync(home).sort(), [
    '.notes.json.0123456789ab.tmp',
    '.settings.json.FFFFFFFFFFFF.tmp',
    '.settings.json.fffffffffff.tmp',
    'credentials.json',
    'credentials.json.0123456789ab.tmp',
  ]);
  t.equal(await removeStaleTemporaries(home, ['credentials.json']), 0, 'a second pass finds none');
  t.equal(await removeStaleTemporaries(join(home, 'missing'), ['credentials.json']), 0, 'nor a missing home');
});

t.test('a home that cannot be listed is an error without its path', async (t) => {
  const home = t.testdir({ 'file.txt': 'not a directory' });
  const error = await removeStaleTemporaries(join(home, 'file.txt'), ['x']).catch((caught) => caught);
  t.type(error, PrivateFileError);
  t.equal(error.code, 'ENOTDIR');
  t.notMatch(error.message, home);
});
