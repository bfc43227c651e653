import {
  appendFileSync,
  chmodSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import { INSIDE, refused, SECRET, sandbox, treeOf } from './workspace-fixture.js';

t.test('replaces the one occurrence, keeping the mode', async (t) => {
  const s = sandbox(t);
  const file = join(s.ws, 'f.ts');
  writeFileSync(file, 'const a = 1;\nconst b = 2;\n');
  chmodSync(file, 0o755);
  const outcome = s.run('edit_file', { path: 'f.ts', old_text: 'b = 2', new_text: 'b = "\u00e9"' });
  t.same(outcome, { ok: true, output: '{"bytes":29}' });
  t.equal(readFileSync(file, 'utf8'), 'const a = 1;\nconst b = "\u00e9";\n');
  t.equal(statSync(file).mode & 0o7777, 0o755);
  t.ok(s.run('edit_file', { path: 'f.ts', old_text: 'const a = 1;\n', new_text: '' }).ok, 'deleting text');
  t.equal(readFileSync(file, 'utf8'), 'const b = "\u00e9";\n');
  t.same(treeOf(s.ws), ['f.ts'], 'no temporary is left');
});

t.test('absent and ambiguous old_text leave the file untouched', async (t) => {
  const s = sandbox(t);
  const file = join(s.ws, 'f.txt');
  writeFileSync(file, 'one two two aaa\n');
  refused(
    t,
    s.run('edit_file', { path: 'f.txt', old_text: 'three', new_text: 'x' }),
    'old_text_not_found',
    'absent',
  );
  refused(
    t,
    s.run('edit_file', { path: 'f.txt', old_text: 'two', new_text: 'x' }),
    'old_text_not_unique',
    'twice',
  );
  refused(
    t,
    s.run('edit_file', { path: 'f.txt', old_text: 'aa', new_text: 'x' }),
    'old_text_not_unique',
    'overlapping occurrences count apart',
  );
  refused(
    t,
    s.run('edit_file', { path: 'f.txt', old_text: 'ONE', new_text: 'x' }),
    'old_text_not_found',
    'case matters',
  );
  t.equal(readFileSync(file, 'utf8'), 'one two two aaa\n');
  refused(
    t,
    s.run('edit_file', { path: 'missing.txt', old_text: 'a', new_text: 'b' }),
    'not_found',
    'no file',
  );
});

t.test('the file and the result bounds, exactly at and one past', async (t) => {
  const s = sandbox(t);
  const max = WORKSPACE_TOOL_LIMITS.edit_file_bytes_max;
  t.equal(max, 262_144);
  const file = join(s.ws, 'f.txt');
  writeFileSync(file, `A${'x'.repeat(max - 1)}`);
  t.same(s.run('edit_file', { path: 'f.txt', old_text: 'A', new_text: 'B' }), {
    ok: true,
    output: `{"bytes":${max}}`,
  });
  refused(
    t,
    s.run('edit_file', { path: 'f.txt', old_text: 'B', new_text: 'CC' }),
    'too_large',
    'result one past',
  );
  t.equal(readFileSync(file, 'utf8')[0], 'B', 'the file is untouched');
  writeFileSync(file, `A${'x'.repeat(max)}`);
  refused(
    t,
    s.run('edit_file', { path: 'f.txt', old_text: 'A', new_text: '' }),
    'too_large',
    'file one past',
  );
});

t.test('only single-linked UTF-8 text files without NUL are edited', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'nul.txt'), 'a\0b');
  refused(t, s.run('edit_file', { path: 'nul.txt', old_text: 'a', new_text: 'b' }), 'binary_file', 'NUL');
  writeFileSync(join(s.ws, 'latin.txt'), Buffer.from([0x61, 0xe9]));
  refused(
    t,
    s.run('edit_file', { path: 'latin.txt', old_text: 'a', new_text: 'b' }),
    'binary_file',
    'not UTF-8',
  );
});

t.test('a file changed between its read and the rename is refused as changed', async (t) => {
  const s = sandbox(t);
  const file = join(s.ws, 'f.txt');
  writeFileSync(file, INSIDE);
  const appended = s.run(
    'edit_file',
    { path: 'f.txt', old_text: 'inside', new_text: 'edited' },
    { hooks: { beforeRename: () => appendFileSync(file, 'theirs\n') } },
  );
  refused(t, appended, 'changed', 'appended meanwhile');
  t.equal(readFileSync(file, 'utf8'), `${INSIDE}theirs\n`, 'their change is kept');
  t.same(treeOf(s.ws), ['f.txt'], 'no temporary is left');

  const swapped = s.run(
    'edit_file',
    { path: 'f.txt', old_text: 'inside', new_text: 'edited' },
    {
      hooks: {
        beforeRename() {
          renameSync(file, join(s.ws, 'f.orig'));
          symlinkSync(join(s.outside, 'secret.txt'), file);
        },
      },
    },
  );
  refused(t, swapped, 'changed', 'swapped for a symlink meanwhile');
  t.equal(readFileSync(join(s.outside, 'secret.txt'), 'utf8'), SECRET, 'nothing outside is written');
  t.same(treeOf(s.ws), ['f.orig', 'f.txt']);
});
