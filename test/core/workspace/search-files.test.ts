import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { SearchFilesOutput } from '../../../core/workspace/search-files.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { INSIDE, refused, SECRET, sandbox } from './workspace-fixture.js';

t.test(
  'a regular expression, line numbers, paths relative to the workspace, depth first in byte order',
  async (t) => {
    const s = sandbox(t);
    mkdirSync(join(s.ws, 'src/lib'), { recursive: true });
    writeFileSync(join(s.ws, 'src/lib/b.ts'), 'const a = 1;\nexport function foo() {}\r\nfoo();\n');
    writeFileSync(join(s.ws, 'src/a.ts'), 'nothing here\n\nfunction foo2() {}');
    writeFileSync(join(s.ws, 'top.md'), 'foo at the top');
    const found = s.output<SearchFilesOutput>('search_files', { pattern: 'function foo\\d?\\(' });
    t.same(found, {
      matches: [
        { path: 'src/a.ts', line: 3, text: 'function foo2() {}' },
        { path: 'src/lib/b.ts', line: 2, text: 'export function foo() {}' },
      ],
      truncated: false,
      files_searched: 3,
      files_skipped: 0,
      literal: false,
    });
    const beneath = s.output<SearchFilesOutput>('search_files', { pattern: '^foo', path: 'src/lib' });
    t.same(beneath.matches, [{ path: 'src/lib/b.ts', line: 3, text: 'foo();' }]);
    t.equal(beneath.files_searched, 1);
    t.same(
      s.output<SearchFilesOutput>('search_files', { pattern: '^$' }).matches,
      [{ path: 'src/a.ts', line: 2, text: '' }],
      'a final newline ends the last line, it does not start another',
    );
  },
);

t.test('a pattern RE2 does not accept is searched as literal text, and the result says so', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'f.txt'), 'call(x\nfoo+bar\nfoob\nfoobar\nFOO\naa\n');
  const literal = s.output<SearchFilesOutput>('search_files', { pattern: 'call(' });
  t.same(literal.matches, [{ path: 'f.txt', line: 1, text: 'call(x' }]);
  t.equal(literal.literal, true);
  const expression = s.output<SearchFilesOutput>('search_files', { pattern: 'o+b' });
  t.same(
    expression.matches.map((match) => match.line),
    [3, 4],
    'a pattern RE2 accepts is an expression, not text',
  );
  t.equal(expression.literal, false);
  t.same(
    s.output<SearchFilesOutput>('search_files', { pattern: '(?i)^foo$' }).matches,
    [{ path: 'f.txt', line: 5, text: 'FOO' }],
    'RE2 flags: (?i)',
  );
  t.same(
    s.output<SearchFilesOutput>('search_files', { pattern: '\\p{Lu}{3}' }).matches.length,
    1,
    '\\p classes',
  );
  for (const pattern of ['foo(?=bar)', '(a)\\1', 'foo(?!x)']) {
    const found = s.output<SearchFilesOutput>('search_files', { pattern });
    t.same(
      [found.literal, found.matches],
      [true, []],
      `${pattern}: lookaround and backreferences are not RE2`,
    );
  }
});

t.test('catastrophic patterns over a 1 MB file complete and return their matches', async (t) => {
  const s = sandbox(t);
  // Lines of 64 letters and a mark: a backtracking engine tries every way to split each run of letters.
  const line = `${'a'.repeat(64)}!`;
  const lines = Math.floor(WORKSPACE_TOOL_LIMITS.search_file_bytes_max / (line.length + 1)) - 1;
  writeFileSync(join(s.ws, 'big.txt'), `${`${line}\n`.repeat(lines)}${'a'.repeat(64)}\n`);
  for (const pattern of ['(a+)+$', '(a|aa)+$', '^(a|a)*$', '^(\\w+\\s?)*$', '(.*a){12}$']) {
    const found = s.output<SearchFilesOutput>('search_files', { pattern });
    t.same(
      [found.literal, found.files_searched, found.matches],
      [false, 1, [{ path: 'big.txt', line: lines + 1, text: 'a'.repeat(64) }]],
      `${pattern}: only the last line, which has no mark, matches`,
    );
  }
});

t.test(
  'what is skipped: symlinks, non-regular, hard-linked, large, binary, credential, .git, state',
  async (t) => {
    const s = sandbox(t);
    const needle = 'NEEDLE';
    writeFileSync(join(s.ws, 'plain.txt'), `${needle}\n`);
    symlinkSync(join(s.outside, 'secret.txt'), join(s.ws, 'link.txt'));
    symlinkSync(s.outside, join(s.ws, 'linkdir'));
    writeFileSync(join(s.outside, 'other.txt'), needle);
    execFileSync('mkfifo', [join(s.ws, 'fifo')]);
    writeFileSync(join(s.ws, 'one.txt'), needle);
    linkSync(join(s.ws, 'one.txt'), join(s.ws, 'two.txt'));
    writeFileSync(
      join(s.ws, 'exact.txt'),
      `${needle}${'x'.repeat(WORKSPACE_TOOL_LIMITS.search_file_bytes_max - 6)}`,
    );
    writeFileSync(
      join(s.ws, 'over.txt'),
      `${needle}${'x'.repeat(WORKSPACE_TOOL_LIMITS.search_file_bytes_max - 5)}`,
    );
    writeFileSync(join(s.ws, 'nul.bin'), `${needle}\0`);
    writeFileSync(join(s.ws, 'latin.txt'), Buffer.from([0x4e, 0x45, 0x45, 0x44, 0x4c, 0x45, 0xe9]));
    writeFileSync(join(s.ws, '.env'), needle);
    mkdirSync(join(s.ws, '.git'));
    writeFileSync(join(s.ws, '.git/HEAD'), needle);
    mkdirSync(join(s.ws, 'state'));
    writeFileSync(join(s.ws, 'state/log.txt'), needle);
    const found = s.output<SearchFilesOutput>(
      'search_files',
      { pattern: needle },
      { excludedDirectories: [join(s.ws, 'state')] },
    );
    t.same(
      found.matches.map((match) => match.path),
      ['exact.txt', 'plain.txt'],
      'a file of exactly 1 MiB is searched, one byte more is not',
    );
    t.equal(found.files_searched, 2);
    // link.txt, linkdir, fifo, one.txt, two.txt, over.txt, nul.bin, latin.txt, .env
    t.equal(found.files_skipped, 9);
    t.equal(found.truncated, false);
    t.notOk(JSON.stringify(found).includes(SECRET));
  },
);

t.test('at most 100 matches: 100 fit, 101 are truncated', async (t) => {
  const s = sandbox(t);
  t.equal(WORKSPACE_TOOL_LIMITS.search_matches_max, 100);
  writeFileSync(join(s.ws, 'a.txt'), 'hit\n'.repeat(60));
  writeFileSync(join(s.ws, 'b.txt'), 'hit\n'.repeat(40));
  const exact = s.output<SearchFilesOutput>('search_files', { pattern: 'hit' });
  t.equal(exact.matches.length, 100);
  t.equal(exact.truncated, false);
  writeFileSync(join(s.ws, 'c.txt'), 'hit\n');
  const over = s.output<SearchFilesOutput>('search_files', { pattern: 'hit' });
  t.equal(over.matches.length, 100);
  t.equal(over.truncated, true);
  t.same(over.matches[99], { path: 'b.txt', line: 40, text: 'hit' });
});

t.test('lines are cut to 256 characters, never inside a surrogate pair', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'long.txt'), `${'\u{1f600}'.repeat(300)} needle`);
  const [match] = s.output<SearchFilesOutput>('search_files', { pattern: 'needle' }).matches;
  t.equal(match?.text, '\u{1f600}'.repeat(256));
  writeFileSync(join(s.ws, 'long.txt'), `needle${'y'.repeat(1_000)}`);
  t.equal(s.output<SearchFilesOutput>('search_files', { pattern: 'needle' }).matches[0]?.text.length, 256);
});

t.test('at most 5,000 files read: 5,000 fit, 5,001 are truncated', { timeout: 120_000 }, async (t) => {
  const s = sandbox(t);
  t.equal(WORKSPACE_TOOL_LIMITS.search_files_max, 5_000);
  for (let d = 0; d < 50; d += 1) {
    const directory = join(s.ws, `d${String(d).padStart(2, '0')}`);
    mkdirSync(directory);
    for (let f = 0; f < 100; f += 1) writeFileSync(join(directory, `f${String(f).padStart(2, '0')}`), 'x\n');
  }
  writeFileSync(join(s.ws, 'd49/f99'), 'last\n');
  const exact = s.output<SearchFilesOutput>('search_files', { pattern: 'last' });
  t.equal(exact.files_searched, 5_000);
  t.equal(exact.truncated, false);
  t.same(exact.matches, [{ path: 'd49/f99', line: 1, text: 'last' }], 'the 5,000th file is searched');
  writeFileSync(join(s.ws, 'zz.txt'), 'last\n');
  const over = s.output<SearchFilesOutput>('search_files', { pattern: 'last' });
  t.equal(over.files_searched, 5_000);
  t.equal(over.truncated, true);
  t.equal(over.matches.length, 1, 'the 5,001st file is not read');
});

t.test('the directory depth is bounded', async (t) => {
  const s = sandbox(t);
  const levels = WORKSPACE_TOOL_LIMITS.search_depth_max;
  const deepest = join(s.ws, ...Array.from({ length: levels }, () => 'd'));
  mkdirSync(join(deepest, 'd'), { recursive: true });
  writeFileSync(join(deepest, 'at.txt'), 'hit');
  writeFileSync(join(deepest, 'd', 'below.txt'), 'hit');
  const found = s.output<SearchFilesOutput>('search_files', { pattern: 'hit' });
  t.same(
    found.matches.map((match) => match.path.split('/').length),
    [levels + 1],
    'files at the deepest level are searched, nothing below it',
  );
  t.equal(found.truncated, true);
});

t.test('the start path: refusals of the walk', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'file'), INSIDE);
  refused(t, s.run('search_files', { pattern: 'x', path: 'file' }), 'not_directory', 'a file');
  refused(t, s.run('search_files', { pattern: 'x', path: 'missing' }), 'not_found', 'missing');
  symlinkSync(s.outside, join(s.ws, 'link'));
  refused(t, s.run('search_files', { pattern: 'x', path: 'link' }), 'symlink', 'a symlink');
  refused(t, s.run('search_files', { pattern: 'x', path: 'link/sub' }), 'symlink', 'an intermediate symlink');
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  const swapped = s.run(
    'search_files',
    { pattern: 'OUTSIDE', path: 'a/b' },
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
  refused(t, swapped, 'symlink', 'the start directory swapped for a symlink during the walk');
});

t.test('swaps during the search never read outside the workspace', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.outside, 'secret.txt'), `needle ${SECRET}`);
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/secret.txt'), 'needle inside');
  writeFileSync(join(s.ws, 'a/f.txt'), 'needle inside');
  const found = s.output<SearchFilesOutput>(
    'search_files',
    { pattern: 'needle' },
    {
      hooks: {
        afterDirectoryOpen(depth) {
          if (depth !== 1) return;
          renameSync(join(s.ws, 'a/b'), join(s.ws, 'b.orig'));
          symlinkSync(s.outside, join(s.ws, 'a/b'));
        },
      },
    },
  );
  t.same(
    found.matches,
    [{ path: 'a/f.txt', line: 1, text: 'needle inside' }],
    'the swapped-in link is not followed',
  );

  unlinkSync(join(s.ws, 'a/b'));
  let swapped = false;
  const files = s.output<SearchFilesOutput>(
    'search_files',
    { pattern: 'needle', path: 'a' },
    {
      hooks: {
        beforeFileOpen() {
          if (swapped) return;
          swapped = true;
          renameSync(join(s.ws, 'a/f.txt'), join(s.ws, 'f.orig'));
          symlinkSync(join(s.outside, 'secret.txt'), join(s.ws, 'a/f.txt'));
        },
      },
    },
  );
  t.same(files.matches, [], 'a file swapped for a symlink before its open is not read');
  t.equal(files.files_skipped, 1);
  t.notOk(JSON.stringify(files).includes(SECRET));
});

t.test('a name that is not UTF-8 cannot be named back: it is skipped', async (t) => {
  const s = sandbox(t);
  writeFileSync(Buffer.from(`${s.ws}/\xff.txt`, 'latin1'), 'needle');
  writeFileSync(join(s.ws, 'plain.txt'), 'needle');
  const found = s.output<SearchFilesOutput>('search_files', { pattern: 'needle' });
  t.same(found.matches, [{ path: 'plain.txt', line: 1, text: 'needle' }]);
  t.equal(found.files_skipped, 1);
});

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');
const OUTPUT_MAX = WORKSPACE_TOOL_LIMITS.output_bytes;

t.test('matches on long lines that expand under escaping are cut to fit, each whole', async (t) => {
  const s = sandbox(t);
  const escaped = ['"', '\\', '\u0001', '\t', 'é', '😀'];
  const lines = Array.from({ length: 100 }, (_, i) => `hit ${escaped[i % escaped.length]!.repeat(400)}`);
  writeFileSync(join(s.ws, 'long.txt'), lines.join('\n'));
  const outcome = s.run('search_files', { pattern: 'hit' });
  t.ok(outcome.ok && bytes(outcome.output) <= OUTPUT_MAX, 'the result fits the output bound');
  const found = s.output<SearchFilesOutput>('search_files', { pattern: 'hit' });
  t.equal(found.truncated, true);
  t.ok(found.matches.length > 10 && found.matches.length < 100, 'as many matches as fit');
  found.matches.forEach((match, i) => {
    t.equal(match.line, i + 1);
    t.equal(match.text, [...lines[i]!].slice(0, WORKSPACE_TOOL_LIMITS.search_line_chars_max).join(''));
  });
});

t.test('matches at the output bound are whole, one byte past it cut by one match', async (t) => {
  const s = sandbox(t);
  const result = (matches: Array<{ path: string; line: number; text: string }>, truncated: boolean) =>
    JSON.stringify({ matches, truncated, files_searched: 1, files_skipped: 0, literal: false });
  // Lines of control bytes (six bytes each once escaped), then one line that fills the bound exactly.
  const line = `hit${'\u0001'.repeat(250)}`;
  const lines: string[] = [];
  const matchesOf = (all: string[]) => all.map((text, i) => ({ path: 'f.txt', line: i + 1, text }));
  const roomLeft = () => OUTPUT_MAX - bytes(result(matchesOf([...lines, '']), false));
  while (roomLeft() > 1_600) lines.push(line);
  const room = roomLeft();
  const last = `hit${'\u0001'.repeat(Math.floor((room - 3) / 6))}${'z'.repeat((room - 3) % 6)}`;
  const all = [...lines, last];
  t.equal(bytes(result(matchesOf(all), false)), OUTPUT_MAX, 'the whole result takes exactly the bound');
  writeFileSync(join(s.ws, 'f.txt'), all.join('\n'));
  t.same(s.run('search_files', { pattern: 'hit' }), { ok: true, output: result(matchesOf(all), false) });
  writeFileSync(join(s.ws, 'f.txt'), [...lines, `${last}z`].join('\n'));
  t.same(
    s.run('search_files', { pattern: 'hit' }),
    { ok: true, output: result(matchesOf(lines), true) },
    'one past: the last match is left out and the result is truncated',
  );
});

t.test('a file whose path is longer than a path argument may be is skipped', async (t) => {
  const s = sandbox(t);
  // Four directories of 254 bytes and their slashes take 1,020 bytes.
  const directory = join(s.ws, ...Array.from({ length: 4 }, (_, i) => `${i}${'d'.repeat(253)}`));
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'at.x'), 'hit');
  writeFileSync(join(directory, 'at.xy'), 'hit');
  const found = s.output<SearchFilesOutput>('search_files', { pattern: 'hit' });
  t.same(
    found.matches.map((match) => bytes(match.path)),
    [1_024],
    'a path of 1,024 bytes is searched, one of 1,025 is not',
  );
  t.equal(found.files_skipped, 1);
});
