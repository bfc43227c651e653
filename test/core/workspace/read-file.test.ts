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
    truncated: false,
  });
  const first = s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', length: 5 });
  t.same(first, { size: 18, offset: 0, length: 5, content: 'line ', next_offset: 5, truncated: false });
  const second = s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', offset: 5, length: 13 });
  t.same(second, {
    size: 18,
    offset: 5,
    length: 13,
    content: 'one\nline two\n',
    next_offset: null,
    truncated: false,
  });
  t.same(s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', offset: 18 }), {
    size: 18,
    offset: 18,
    length: 0,
    content: '',
    next_offset: null,
    truncated: false,
  });
  t.same(s.output<ReadFileOutput>('read_file', { path: 'a/b/f.txt', offset: 1_000 }).next_offset, null);
  writeFileSync(join(s.ws, 'empty'), '');
  t.same(s.output<ReadFileOutput>('read_file', { path: 'empty' }), {
    size: 0,
    offset: 0,
    length: 0,
    content: '',
    next_offset: null,
    truncated: false,
  });
});

t.test('windows keep whole UTF-8 characters', async (t) => {
  const s = sandbox(t);
  // a (1 byte), é (2), € (3), 😀 (4), z (1): byte offsets 0, 1, 3, 6, 10
  writeFileSync(join(s.ws, 'u.txt'), 'a\u00e9\u20ac\u{1f600}z');
  const read = (offset: number, length: number) =>
    s.output<ReadFileOutput>('read_file', { path: 'u.txt', offset, length });
  t.same(
    read(0, 2),
    { size: 11, offset: 0, length: 1, content: 'a', next_offset: 1, truncated: false },
    'end inside é',
  );
  t.same(
    read(2, 5),
    { size: 11, offset: 1, length: 5, content: '\u00e9\u20ac', next_offset: 6, truncated: false },
    'start inside é',
  );
  t.same(
    read(8, 3),
    { size: 11, offset: 6, length: 4, content: '\u{1f600}', next_offset: 10, truncated: false },
    'inside 😀',
  );
  t.same(read(7, 5), {
    size: 11,
    offset: 6,
    length: 5,
    content: '\u{1f600}z',
    next_offset: null,
    truncated: false,
  });
  t.same(
    read(6, 1),
    { size: 11, offset: 6, length: 4, content: '\u{1f600}', next_offset: 10, truncated: false },
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
    truncated: false,
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

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const OUTPUT_MAX = WORKSPACE_TOOL_LIMITS.output_bytes;
const WINDOW = WORKSPACE_TOOL_LIMITS.read_length_max;

/** The result of reading all of `content` in one window from 0, as read_file gives it. */
function wholeWindow(content: string): string {
  const size = bytes(content);
  return JSON.stringify({ size, offset: 0, length: size, content, next_offset: null, truncated: false });
}

/**
 * A text of exactly one default window whose whole-window result takes `target` bytes: as many of
 * `character` as fit the room its escapes take, newlines (two bytes each) for the rest, then plain letters.
 */
function windowEncodedTo(character: string, target: number): string {
  const frame = bytes(wholeWindow('a'.repeat(WINDOW)));
  const extra = target - frame;
  const grows = bytes(JSON.stringify(character)) - 2 - bytes(character);
  const count = Math.floor(extra / grows);
  const newlines = extra - count * grows;
  const text = character.repeat(count) + '\n'.repeat(newlines);
  return text + 'a'.repeat(WINDOW - bytes(text));
}

t.test('the output bound is the built-in tools’ own', async (t) => {
  t.equal(OUTPUT_MAX, 32_768);
});

t.test(
  'a window whose escaped result passes the output bound is cut to fit, at and one past it',
  async (t) => {
    const s = sandbox(t);
    for (const [label, character] of [
      ['newlines', '\n'],
      ['quotes', '"'],
      ['backslashes', '\\'],
      ['control bytes', '\u0001'],
      ['tabs', '\t'],
    ] as const) {
      const at = windowEncodedTo(character, OUTPUT_MAX);
      t.equal(bytes(wholeWindow(at)), OUTPUT_MAX, `${label}: the whole window takes exactly the bound`);
      writeFileSync(join(s.ws, 'f.txt'), at);
      const whole = s.run('read_file', { path: 'f.txt' });
      t.same(whole, { ok: true, output: wholeWindow(at) }, `${label}: at the bound the window is whole`);

      // One byte more once escaped: the last letter becomes a newline.
      const past = `${at.slice(0, -1)}\n`;
      writeFileSync(join(s.ws, 'f.txt'), past);
      const outcome = s.run('read_file', { path: 'f.txt' });
      t.ok(outcome.ok && bytes(outcome.output) <= OUTPUT_MAX, `${label}: one past, the result fits`);
      const cut = s.output<ReadFileOutput>('read_file', { path: 'f.txt' });
      t.equal(cut.truncated, true, `${label}: one past, it is truncated`);
      t.equal(cut.content, past.slice(0, -1), `${label}: by the one character that does not fit`);
      t.equal(cut.length, WINDOW - 1);
      t.equal(cut.next_offset, WINDOW - 1, `${label}: next_offset is the cut`);
    }
  },
);

t.test('files that expand under escaping are read in windows that fit, and reassemble exactly', async (t) => {
  const s = sandbox(t);
  const mixed = Array.from(
    { length: 4_000 },
    (_, i) => ['\n', '"', '\\', '\u0001', '\u001f', 'é', '€', '😀', 'plain text ', '\r\n'][i % 10],
  ).join('');
  for (const [label, text] of [
    ['20,000 newlines', '\n'.repeat(20_000)],
    ['17,000 quotes', '"'.repeat(17_000)],
    ['6,000 control bytes', '\u0001'.repeat(6_000)],
    ['20,000 backslashes', '\\'.repeat(20_000)],
    ['non-ASCII and escapes mixed', mixed.repeat(5)],
  ] as const) {
    writeFileSync(join(s.ws, 'f.txt'), text);
    let offset: number | null = 0;
    let read = '';
    let windows = 0;
    while (offset !== null) {
      const outcome = s.run('read_file', { path: 'f.txt', offset });
      if (!outcome.ok) {
        t.fail(`${label}: refused as ${outcome.code}`);
        break;
      }
      t.ok(bytes(outcome.output) <= OUTPUT_MAX, `${label}: window ${windows} fits the output bound`);
      const window = JSON.parse(outcome.output) as ReadFileOutput;
      t.equal(window.offset, offset, `${label}: each window starts where the last one said`);
      t.equal(window.length, bytes(window.content));
      if (window.next_offset !== null) t.equal(window.next_offset, window.offset + window.length);
      read += window.content;
      offset = window.next_offset;
      windows += 1;
    }
    t.equal(read, text, `${label}: the windows reassemble the file exactly`);
    t.ok(windows > 1, `${label}: more than one window`);
  }
  writeFileSync(join(s.ws, 'f.txt'), '\u0001'.repeat(6_000));
  const first = s.output<ReadFileOutput>('read_file', { path: 'f.txt' });
  t.equal(first.truncated, true, 'the default window of 6,000 control bytes is cut');
  t.ok(first.length < 6_000 && first.length > 5_400, 'to as much as fits');
});
