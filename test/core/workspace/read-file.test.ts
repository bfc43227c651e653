import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  renameSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { ReadFileOutput } from '../../../core/workspace/read-file.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { INSIDE, openFdCount, refused, SECRET, sandbox } from './workspace-fixture.js';

t.test('a whole small file, and windows that follow one another to the end', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/f.txt'), 'line one\nline two\n');
  t.same(s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt' }), {
    size: 18,
    offset: 0,
    length: 18,
    content: 'line one\nline two\n',
    next_offset: null,
  });
  const first = s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', length: 5 });
  t.same(first, { size: 18, offset: 0, length: 5, content: 'line ', next_offset: 5 });
  const second = s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', offset: 5, length: 13 });
  t.same(second, { size: 18, offset: 5, length: 13, content: 'one\nline two\n', next_offset: null });
  t.same(s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', offset: 18 }), {
    size: 18,
    offset: 18,
    length: 0,
    content: '',
    next_offset: null,
  });
  t.same(s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', offset: 1_000 }).next_offset, null);
  writeFileSync(join(s.ws, 'empty'), '');
  t.same(s.output<ReadFileOutput>('read_file', { path: 'empty' }), {
    size: 0,
    offset: 0,
    length: 0,
    content: '',
    next_offset: null,
  });
});

t.test('windows keep whole UTF-8 characters', async (t) => {
  const s = sandbox(t);
  // a (1 byte), é (2), € (3), 😀 (4), z (1): byte offsets 0, 1, 3, 6, 10
  writeFileSync(join(s.ws, 'u.txt'), 'a\u00e9\u20ac\u{1f600}z');
  const read = (offset: number, length: number) =>
    s.output<ReadFileOutput>('read_file', { path: 'u.txt', offset, length });
  t.same(read(0, 2), { size: 11, offset: 0, length: 1, content: 'a', next_offset: 1 }, 'end inside é');
  t.same(
    read(2, 5),
    { size: 11, offset: 1, length: 5, content: '\u00e9\u20ac', next_offset: 6 },
    'start inside é',
  );
  t.same(read(8, 3), { size: 11, offset: 6, length: 4, content: '\u{1f600}', next_offset: 10 }, 'inside 😀');
  t.same(read(7, 5), { size: 11, offset: 6, length: 5, content: '\u{1f600}z', next_offset: null });
  t.same(
    read(6, 1),
    { size: 11, offset: 6, length: 4, content: '\u{1f600}', next_offset: 10 },
    'a window too short for its first character still holds it whole',
  );
  let offset = 0;
  let text = '';
  for (let step = 0; step < 20 && offset !== null; step += 1) {
    const window = read(offset, 2);
    text += window.content;
    t.ok(window.length > 0, `step ${step} moves on`);
    offset = window.next_offset as number;
    if (window.next_offset === null) break;
  }
  t.equal(text, 'a\u00e9\u20ac\u{1f600}z', 'windows of two bytes read it all, character by character');
});

t.test('exactly the largest window, and a file far larger than it', async (t) => {
  const s = sandbox(t);
  const max = WORKSPACE_TOOL_LIMITS.read_length_max;
  writeFileSync(join(s.ws, 'big.txt'), 'x'.repeat(max * 3 + 7));
  const window = s.output<ReadFileOutput>('read_file', { path: 'big.txt' });
  t.equal(window.length, max);
  t.equal(window.content.length, max);
  t.equal(window.next_offset, max);
  t.equal(s.output<ReadFileOutput>('read_file', { path: 'big.txt', offset: max * 3 }).length, 7);

  // A sparse file of 8 GiB: only the window is read.
  const huge = join(s.ws, 'huge.txt');
  const fd = openSync(huge, 'w');
  const tail = Buffer.from('the end\n');
  writeSync(fd, tail, 0, tail.length, 8 * 1024 ** 3);
  closeSync(fd);
  const last = s.output<ReadFileOutput>('read_file', { path: 'huge.txt', offset: 8 * 1024 ** 3 });
  t.same(last, {
    size: 8 * 1024 ** 3 + 8,
    offset: 8 * 1024 ** 3,
    length: 8,
    content: 'the end\n',
    next_offset: null,
  });
  refused(
    t,
    s.run('read_file', { path: 'huge.txt', offset: 0, length: 16 }),
    'binary_file',
    'the holes are NULs',
  );
});

t.test(
  'a window holding a NUL or invalid UTF-8 is binary_file; other windows of the file are read',
  async (t) => {
    const s = sandbox(t);
    writeFileSync(
      join(s.ws, 'mixed.bin'),
      Buffer.concat([Buffer.from('text first\n'), Buffer.from([0, 1, 2])]),
    );
    refused(t, s.run('read_file', { path: 'mixed.bin' }), 'binary_file', 'NUL');
    t.equal(s.output<ReadFileOutput>('read_file', { path: 'mixed.bin', length: 11 }).content, 'text first\n');
    for (const [name, bytes] of [
      ['lone continuation', [0x61, 0x80, 0x62]],
      ['overlong slash', [0xc0, 0xaf]],
      ['encoded surrogate', [0xed, 0xa0, 0x80]],
      ['latin-1', [0x63, 0x61, 0x66, 0xe9, 0x21]],
    ] as const) {
      writeFileSync(join(s.ws, 'bad.txt'), Buffer.from(bytes));
      refused(t, s.run('read_file', { path: 'bad.txt' }), 'binary_file', name);
    }
  },
);

t.test('a file changed during the read is refused as changed', async (t) => {
  const s = sandbox(t);
  const file = join(s.ws, 'f.txt');
  writeFileSync(file, INSIDE);
  refused(
    t,
    s.run('read_file', { path: 'f.txt' }, { hooks: { afterRead: () => appendFileSync(file, 'more') } }),
    'changed',
    'appended',
  );
  writeFileSync(file, INSIDE);
  refused(
    t,
    s.run(
      'read_file',
      { path: 'f.txt' },
      {
        hooks: {
          afterRead: () => {
            writeFileSync(`${file}.new`, INSIDE);
            renameSync(`${file}.new`, file);
          },
        },
      },
    ),
    'changed',
    'replaced by rename',
  );
  t.equal(
    s.output<ReadFileOutput>('read_file', { path: 'f.txt' }).content,
    INSIDE,
    'unchanged reads succeed',
  );
});

t.test('swaps during the walk never read outside the workspace', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/secret.txt'), INSIDE);
  const swapDirectory = (depth: number) => ({
    hooks: {
      afterDirectoryOpen(at: number) {
        if (at !== depth) return;
        renameSync(join(s.ws, 'a/b'), join(s.ws, 'a/b.orig'));
        symlinkSync(s.outside, join(s.ws, 'a/b'));
      },
    },
  });
  refused(
    t,
    s.run('read_file', { path: 'a/b/secret.txt' }, swapDirectory(1)),
    'symlink',
    'before it is opened',
  );
  renameSync(join(s.ws, 'a/b'), join(s.ws, 'a/b.link'));
  renameSync(join(s.ws, 'a/b.orig'), join(s.ws, 'a/b'));
  const held = s.output<ReadFileOutput>('read_file', { path: 'a/b/secret.txt' }, swapDirectory(2));
  t.equal(held.content, INSIDE, 'after it is opened, the held directory is read, never the outside');
  t.notMatch(held.content, SECRET);

  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  const before = openFdCount();
  refused(
    t,
    s.run(
      'read_file',
      { path: 'f.txt' },
      {
        hooks: {
          beforeFileOpen() {
            renameSync(join(s.ws, 'f.txt'), join(s.ws, 'f.orig'));
            symlinkSync(join(s.outside, 'secret.txt'), join(s.ws, 'f.txt'));
          },
        },
      },
    ),
    'symlink',
    'the target swapped between its lstat and its open',
  );
  t.equal(openFdCount(), before, 'every descriptor is closed');
});
