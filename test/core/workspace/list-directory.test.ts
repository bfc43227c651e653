import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { ListDirectoryOutput } from '../../../core/workspace/list-directory.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { INSIDE, refused, type Sandbox, sandbox } from './workspace-fixture.js';

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
    next_offset: null,
    hidden: 0,
  });
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: 'dir' }).entries, [
    { name: 'inner.txt', type: 'file', size: INSIDE.length },
  ]);
  mkdirSync(join(s.ws, 'empty'));
  t.same(s.output<ListDirectoryOutput>('list_directory', { path: 'empty' }), {
    entries: [],
    truncated: false,
    next_offset: null,
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
    next_offset: null,
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
  t.equal(over.next_offset, 500);
  t.same(
    s.output<ListDirectoryOutput>('list_directory', { path: 'many', offset: 500 }),
    { entries: [{ name: 'f0500', type: 'file', size: 0 }], truncated: false, next_offset: null, hidden: 0 },
    'the next page holds the rest',
  );
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

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const OUTPUT_MAX = WORKSPACE_TOOL_LIMITS.output_bytes;

/** Every entry of a directory, page after page from offset 0, checking that each page fits. */
function allPages(t: Test, s: Sandbox, path: string): { names: string[]; pages: ListDirectoryOutput[] } {
  const names: string[] = [];
  const pages: ListDirectoryOutput[] = [];
  let offset: number | null = 0;
  while (offset !== null && pages.length < 1_000) {
    const outcome = s.run('list_directory', { path, offset });
    if (!outcome.ok) throw new Error(`refused as ${outcome.code}`);
    t.ok(bytes(outcome.output) <= OUTPUT_MAX, `page ${pages.length} fits the output bound`);
    const page = JSON.parse(outcome.output) as ListDirectoryOutput;
    t.equal(page.truncated, page.next_offset !== null);
    if (page.next_offset !== null) t.equal(page.next_offset, offset + page.entries.length);
    names.push(...page.entries.map((entry) => entry.name));
    pages.push(page);
    offset = page.next_offset;
  }
  return { names, pages };
}

t.test('a folder of 400 files with 55-character names is listed page by page', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'many'));
  const expected = Array.from({ length: 400 }, (_, i) => `${String(i).padStart(3, '0')}-${'n'.repeat(51)}`);
  for (const name of expected) writeFileSync(join(s.ws, 'many', name), 'x');
  t.equal(expected[0]!.length, 55);
  t.ok(
    bytes(JSON.stringify(expected.map((name) => ({ name, type: 'file', size: 1 })))) > OUTPUT_MAX,
    'the whole listing would not fit one result',
  );
  const { names, pages } = allPages(t, s, 'many');
  t.same(names, expected, 'every entry once, in order');
  t.ok(pages.length >= 2, 'in more than one page');
  t.equal(pages[0]!.truncated, true);
});

t.test(
  'names that expand under escaping: a page at the output bound is whole, one past is cut',
  async (t) => {
    const s = sandbox(t);
    mkdirSync(join(s.ws, 'odd'));
    const entry = (name: string) => ({ name, type: 'file', size: 0 });
    const page = (names: string[]) =>
      JSON.stringify({ entries: names.map(entry), truncated: false, next_offset: null, hidden: 0 });
    // Names of 250 bytes that escape to 500 or 1,500 each, as many as leave room for one more name.
    const escapes = ['"', '\\', '\n', '\u0001', '\t'];
    const names: string[] = [];
    const roomLeft = () => OUTPUT_MAX - bytes(page([...names, '']));
    while (roomLeft() > 6 * 200) {
      names.push(`${String(names.length).padStart(2, '0')}${escapes[names.length % 5]!.repeat(248)}`);
    }
    // The last name fills the bound exactly: control bytes, then letters for what is left.
    const room = roomLeft();
    const last = `99${'\u0001'.repeat(Math.floor((room - 2) / 6))}${'z'.repeat((room - 2) % 6)}`;
    const all = [...names, last];
    t.equal(bytes(page(all)), OUTPUT_MAX, 'the whole listing takes exactly the bound');
    for (const name of all) writeFileSync(join(s.ws, 'odd', name), '');
    t.same(s.run('list_directory', { path: 'odd' }), { ok: true, output: page(all) }, 'at the bound: whole');

    renameSync(join(s.ws, 'odd', last), join(s.ws, 'odd', `${last}z`));
    const { names: paged, pages } = allPages(t, s, 'odd');
    t.same(paged, [...all.slice(0, -1), `${last}z`], 'one past: cut, and the next page holds the rest');
    t.equal(pages.length, 2);
    t.equal(pages[0]!.entries.length, all.length - 1);
    t.equal(pages[0]!.next_offset, all.length - 1);
  },
);

t.test('hidden entries take no place in the pages, and are counted on every page', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'mixed'));
  for (let i = 0; i < 600; i += 1) writeFileSync(join(s.ws, 'mixed', `f${String(i).padStart(4, '0')}`), '');
  for (const name of ['.env', 'f0100.pem', 'id_rsa']) writeFileSync(join(s.ws, 'mixed', name), '');
  const state = join(s.ws, 'mixed', 'f0300-state');
  mkdirSync(state);
  const options = { excludedDirectories: [state] };
  const first = s.output<ListDirectoryOutput>('list_directory', { path: 'mixed' }, options);
  const second = s.output<ListDirectoryOutput>(
    'list_directory',
    { path: 'mixed', offset: first.next_offset },
    options,
  );
  t.same([first.entries.length, first.next_offset, first.hidden], [500, 500, 4]);
  t.same([second.entries.length, second.next_offset, second.truncated, second.hidden], [100, null, false, 4]);
  t.same(
    [...first.entries, ...second.entries].map((entry) => entry.name),
    Array.from({ length: 600 }, (_, i) => `f${String(i).padStart(4, '0')}`),
  );
  t.same(
    s.output<ListDirectoryOutput>('list_directory', { path: 'mixed', offset: 600 }, options),
    { entries: [], truncated: false, next_offset: null, hidden: 4 },
    'an offset at the end lists nothing',
  );
  t.same(
    s.output<ListDirectoryOutput>('list_directory', { path: 'mixed', offset: 10_000 }, options).entries,
    [],
    'nor one past it',
  );
});
