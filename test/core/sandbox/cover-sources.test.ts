import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { CoverSources, SandboxClosed } from '../../../core/sandbox/cover-sources.js';

function scratch(t: { teardown(fn: () => unknown): void }): string {
  const directory = mkdtempSync(join(tmpdir(), 'magi-covers-test-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

const mode = (path: string) => statSync(path).mode & 0o7777;

t.test('the covers are an empty read-only file and folder, made once in a private folder', async (t) => {
  const parent = join(scratch(t), 'run', 'sandbox');
  const covers = new CoverSources(parent);
  const paths = await covers.paths();
  t.equal(dirname(paths.file), dirname(paths.directory));
  t.equal(dirname(dirname(paths.file)), parent, 'in a folder of their own inside the parent');
  t.match(paths.file, /\/covers-[^/]+\/empty-file$/);
  t.equal(mode(parent), 0o700, 'the parent is the daemon’s alone');
  t.equal(readFileSync(paths.file, 'utf8'), '');
  t.equal(mode(paths.file), 0o444);
  t.same(readdirSync(paths.directory), []);
  t.equal(mode(paths.directory), 0o555);
  t.same(await covers.paths(), paths, 'the same covers for every command');
  t.same(readdirSync(parent).length, 1);

  await covers.close();
  t.same(readdirSync(parent), [], 'close removes them');
  await t.rejects(covers.paths(), SandboxClosed, 'and no command gets any after');
  await covers.close();
});

t.test('a failed attempt is not kept: the next command tries again', async (t) => {
  const root = scratch(t);
  writeFileSync(join(root, 'run'), 'a file where the folder should be');
  const covers = new CoverSources(join(root, 'run', 'sandbox'));
  t.teardown(() => covers.close());
  await t.rejects(covers.paths(), { code: 'ENOTDIR' });
  rmSync(join(root, 'run'));
  const paths = await covers.paths();
  t.equal(readFileSync(paths.file, 'utf8'), '');
});

t.test('sweep removes what an earlier daemon of the home left', async (t) => {
  const parent = join(scratch(t), 'sandbox');
  mkdirSync(join(parent, 'covers-old', 'empty-directory'), { recursive: true });
  writeFileSync(join(parent, 'covers-old', 'empty-file'), '');
  const covers = new CoverSources(parent);
  await covers.sweep();
  t.throws(() => statSync(parent), { code: 'ENOENT' });
  await covers.sweep();
  const paths = await covers.paths();
  t.same(readdirSync(parent), [dirname(paths.file).slice(parent.length + 1)], 'new covers are made after it');
  await covers.close();
});

t.test('close while the covers are being made waits for them and removes them', async (t) => {
  const parent = join(scratch(t), 'sandbox');
  const covers = new CoverSources(parent);
  const making = covers.paths();
  await covers.close();
  await making;
  t.same(readdirSync(parent), []);
  const unusedParent = join(scratch(t), 'never');
  await new CoverSources(unusedParent).close();
  t.throws(() => statSync(unusedParent), { code: 'ENOENT' }, 'nothing was made for nothing');
});
