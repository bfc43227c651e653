import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import t from 'tap';
import { EmptyFile, SandboxClosed } from '../../../core/sandbox/empty-file.js';

t.test('one read-only empty file, made once, removed on close', async (t) => {
  const empty = new EmptyFile();
  const [first, second] = await Promise.all([empty.path(), empty.path()]);
  t.equal(first, second, 'concurrent callers share one file');
  const info = await stat(first);
  t.ok(info.isFile());
  t.equal(info.size, 0);
  t.equal(info.mode & 0o777, 0o444, 'read-only');
  t.equal((await stat(dirname(first))).mode & 0o777, 0o700, 'in a private directory');
  t.equal(await readFile(first, 'utf8'), '');

  await empty.close();
  await t.rejects(stat(dirname(first)), { code: 'ENOENT' }, 'its directory is removed');
  await t.rejects(empty.path(), SandboxClosed, 'none is made after close');
});

t.test('closing before the file is needed makes none', async (t) => {
  const empty = new EmptyFile();
  await empty.close();
  await t.rejects(empty.path(), { message: 'the sandbox is closed' });
});
