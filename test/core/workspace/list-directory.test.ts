import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { ListDirectoryOutput } from '../../../core/workspace/list-directory.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { INSIDE, refused, sandbox } from './workspace-fixture.js';

const SECRET_LIKE = '{"auths":{}}';

t.test('entries in byte order with their types, sizes only for files, symlinks not followed', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'dir'));
  writeFileSync(join(s.ws, 'b.txt'), INSIDE);
  writeFileSync(join(s.ws, 'B.txt'), 'xy');
  writeFileSync(join(s.ws, '\u00e9.txt'), '');
  symlinkSync(s.outside, join(s.ws, 'link'));
  execFileSync('mkfifo', [join(s.ws, 'fifo')]);
  writeFileSync(join(s.ws, 'dir/inner.txt'), INSIDE);
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: '.' }), {
    entries: [
      { name: 'B.txt', type: 'file', size: 2 },
      { name: 'b.txt', type: 'file', size: INSIDE.length },
      { name: 'dir', type: 'directory' },
      { name: 'fifo', type: 'other' },
      { name: 'link', type: 'symlink' },
      { name: '\u00e9.txt', type: 'file', size: 0 },
    ],
    truncated: false,
    hidden: 0,
  });
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: 'dir' }).entries, [
    { name: 'inner.txt', type: 'file', size: INSIDE.length },
  ]);
  mkdirSync(join(s.ws, 'empty'));
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: 'empty' }), {
    entries: [],
    truncated: false,
    hidden: 0,
  });
});

t.test('credential-like entries and daemon state are left out and counted', async (t) => {
  const s = sandbox(t);
  for (const name of ['.env', '.git', '.ssh', 'key.pem', 'visible.txt'])
    writeFileSync(join(s.ws, name), INSIDE);
  mkdirSync(join(s.ws, '.docker'));
  writeFileSync(join(s.ws, '.docker/config.json'), SECRET_LIKE);
  writeFileSync(join(s.ws, '.docker/other.json'), INSIDE);
  const inner = join(s.ws, 'state');
  mkdirSync(inner);
  const listing = s.output<ListDirectoryOutput>(
    'list_directory',
    { path: '.' },
    { excludedDirectories: [inner] },
  );
  t.same(
    listing.entries.map((entry) => entry.name),
    ['.docker', 'visible.txt'],
  );
  t.equal(listing.hidden, 5);
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: '.docker' }), {
    entries: [{ name: 'other.json', type: 'file', size: INSIDE.length }],
    truncated: false,
    hidden: 1,
  });
  t.equal(
    s.output<ListDirectoryOutput>('list_directory', { path: '.' }).hidden,
    4,
    'not excluded, state is shown',
  );
});

t.test('at most 500 entries: 500 fit, 501 are truncated', async (t) => {
  const s = sandbox(t);
  t.equal(WORKSPACE_TOOL_LIMITS.list_entries_max, 500);
  mkdirSync(join(s.ws, 'many'));
  for (let i = 0; i < 500; i += 1) writeFileSync(join(s.ws, 'many', `f${String(i).padStart(4, '0')}`), '');
  const full = s.output<ListDirectoryOutput>('list_directory', { path: 'many' });
  t.equal(full.entries.length, 500);
  t.equal(full.truncated, false);
  writeFileSync(join(s.ws, 'many', 'f0500'), '');
  const over = s.output<ListDirectoryOutput>('list_directory', { path: 'many' });
  t.equal(over.entries.length, 500);
  t.equal(over.truncated, true);
  t.equal(over.entries[0]?.name, 'f0000', 'the first in byte order are kept');
  t.equal(over.entries[499]?.name, 'f0499');
  // State past the first 500 entries is still counted as hidden, not as truncated.
  const inner = join(s.ws, 'many', 'zz-state');
  mkdirSync(inner);
  const hidden = s.output<ListDirectoryOutput>(
    'list_directory',
    { path: 'many' },
    { excludedDirectories: [inner] },
  );
  t.equal(hidden.hidden, 1);
  t.equal(hidden.entries.length, 500);
});

t.test('the directory itself: refusals of the walk', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'file'), INSIDE);
  refused(t, s.run('list_directory', { path: 'file' }), 'not_directory', 'a file');
  refused(t, s.run('list_directory', { path: 'missing' }), 'not_found', 'missing');
  symlinkSync(s.outside, join(s.ws, 'link'));
  refused(t, s.run('list_directory', { path: 'link' }), 'symlink', 'a symlink');
  linkSync(join(s.ws, 'file'), join(s.ws, 'hard'));
  refused(t, s.run('list_directory', { path: 'hard' }), 'not_directory', 'a hard link is no directory');
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  const swapped = s.run(
    'list_directory',
    { path: 'a/b' },
    {
      hooks: {
        afterDirectoryOpen(depth) {
          if (depth !== 1) return;
          renameSync(join(s.ws, 'a/b'), join(s.ws, 'a/b.orig'));
          symlinkSync(s.outside, join(s.ws, 'a/b'));
        },
      },
    },
  );
  refused(t, swapped, 'symlink', 'the directory swapped for a symlink during the walk');
});

t.test('a name that is not UTF-8 is listed with replacement characters', async (t) => {
  const s = sandbox(t);
  writeFileSync(Buffer.from(`${s.ws}/\xff.txt`, 'latin1'), 'x');
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: '.' }).entries, [
    { name: '\ufffd.txt', type: 'file', size: 1 },
  ]);
});
