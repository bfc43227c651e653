import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { temporaryName, writeRefusal } from '../../../core/workspace/atomic-write.js';
import {
  WORKSPACE_TOOL_ERRORS,
  WorkspaceToolFailure,
} from '../../../core/workspace/workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import type { WriteFileOutput } from '../../../core/workspace/write-file.js';
import { INSIDE, openFdCount, refused, SECRET, sandbox, treeOf } from './workspace-fixture.js';

const modeOf = (path: string) => statSync(path).mode & 0o7777;

t.test(
  'creates a file with mode 0644 and its missing parents, then replaces it keeping its mode',
  async (t) => {
    const s = sandbox(t);
    const previous = process.umask(0o077);
    t.teardown(() => process.umask(previous));
    t.same(s.output<WriteFileOutput>('write_file', { path: 'a/b/new.txt', content: 'h\u00e9\n' }), {
      bytes: 4,
      created: true,
    });
    const file = join(s.ws, 'a/b/new.txt');
    t.equal(readFileSync(file, 'utf8'), 'h\u00e9\n');
    t.equal(modeOf(file), 0o644, 'exactly 0644, whatever the umask');
    t.ok(statSync(join(s.ws, 'a/b')).isDirectory());
    chmodSync(file, 0o600);
    t.same(s.output<WriteFileOutput>('write_file', { path: 'a/b/new.txt', content: '' }), {
      bytes: 0,
      created: false,
    });
    t.equal(readFileSync(file, 'utf8'), '');
    t.equal(modeOf(file), 0o600, 'the replaced file keeps its mode');
    t.same(treeOf(s.ws), ['a', 'a/b', 'a/b/new.txt'], 'no temporary is left');
  },
);

t.test('the content bound: exactly 262144 bytes are written, one more is refused', async (t) => {
  const s = sandbox(t);
  const max = WORKSPACE_TOOL_LIMITS.write_bytes_max;
  t.same(s.output<WriteFileOutput>('write_file', { path: 'max.txt', content: 'x'.repeat(max) }), {
    bytes: max,
    created: true,
  });
  t.equal(statSync(join(s.ws, 'max.txt')).size, max);
  refused(
    t,
    s.run('write_file', { path: 'max.txt', content: 'y'.repeat(max + 1) }),
    'invalid_arguments',
    '+1',
  );
  t.equal(readFileSync(join(s.ws, 'max.txt'), 'utf8'), 'x'.repeat(max), 'the file is untouched');
});

t.test('temporaries are hidden, beside the target, with 12 hex digits', async (t) => {
  t.match(temporaryName('notes.md'), /^\.notes\.md\.[0-9a-f]{12}\.tmp$/);
  t.not(temporaryName('a'), temporaryName('a'));
});

t.test(
  'a symlink swapped in for a directory being created is refused; nothing is written outside',
  async (t) => {
    const s = sandbox(t);
    const outcome = s.run(
      'write_file',
      { path: 'new/deeper/f.txt', content: INSIDE },
      {
        hooks: {
          afterDirectoryOpen(depth) {
            if (depth === 1) symlinkSync(s.outside, join(s.ws, 'new/deeper'));
          },
        },
      },
    );
    refused(t, outcome, 'symlink', 'the link is never followed');
    t.same(treeOf(s.outside), ['secret.txt']);
  },
);

t.test('between the parent walk and the rename', async (t) => {
  t.test(
    'the target swapped for a symlink is refused, the outside untouched, the temporary removed',
    async (t) => {
      const s = sandbox(t);
      mkdirSync(join(s.ws, 'd'));
      writeFileSync(join(s.ws, 'd/f.txt'), INSIDE);
      const before = openFdCount();
      const outcome = s.run(
        'write_file',
        { path: 'd/f.txt', content: 'new content' },
        {
          hooks: {
            beforeRename() {
              renameSync(join(s.ws, 'd/f.txt'), join(s.ws, 'f.orig'));
              symlinkSync(join(s.outside, 'secret.txt'), join(s.ws, 'd/f.txt'));
            },
          },
        },
      );
      refused(t, outcome, 'symlink', 'refused');
      t.equal(readFileSync(join(s.outside, 'secret.txt'), 'utf8'), SECRET);
      t.ok(lstatSync(join(s.ws, 'd/f.txt')).isSymbolicLink(), 'the link itself stays');
      t.same(treeOf(join(s.ws, 'd')), ['f.txt'], 'no temporary is left');
      t.equal(openFdCount(), before);
    },
  );

  t.test(
    'the parent swapped for a symlink: the write lands in the held directory, never outside',
    async (t) => {
      const s = sandbox(t);
      mkdirSync(join(s.ws, 'd'));
      const outcome = s.run(
        'write_file',
        { path: 'd/f.txt', content: 'new content' },
        {
          hooks: {
            beforeRename() {
              renameSync(join(s.ws, 'd'), join(s.ws, 'd.orig'));
              symlinkSync(s.outside, join(s.ws, 'd'));
            },
          },
        },
      );
      t.ok(outcome.ok);
      t.equal(readFileSync(join(s.ws, 'd.orig/f.txt'), 'utf8'), 'new content');
      t.same(treeOf(s.outside), ['secret.txt'], 'nothing was written outside');
    },
  );

  t.test('the target swapped for a directory is refused', async (t) => {
    const s = sandbox(t);
    writeFileSync(join(s.ws, 'f.txt'), INSIDE);
    const outcome = s.run(
      'write_file',
      { path: 'f.txt', content: 'new' },
      {
        hooks: {
          beforeRename() {
            renameSync(join(s.ws, 'f.txt'), join(s.ws, 'f.orig'));
            mkdirSync(join(s.ws, 'f.txt'));
          },
        },
      },
    );
    refused(t, outcome, 'not_regular_file', 'refused');
    t.same(treeOf(s.ws), ['f.orig', 'f.txt']);
  });
});

t.test('missing parents are created only beneath the workspace', async (t) => {
  const s = sandbox(t);
  symlinkSync(s.outside, join(s.ws, 'out'));
  refused(t, s.run('write_file', { path: 'out/new/f.txt', content: INSIDE }), 'symlink', 'through a symlink');
  t.notOk(existsSync(join(s.outside, 'new')));
  writeFileSync(join(s.ws, 'file'), INSIDE);
  refused(t, s.run('write_file', { path: 'file/f.txt', content: INSIDE }), 'not_directory', 'through a file');
});

t.test('a name too long for its temporary is unwritable, and nothing is left', async (t) => {
  const s = sandbox(t);
  const name = 'n'.repeat(250);
  refused(t, s.run('write_file', { path: name, content: INSIDE }), 'unwritable', 'ENAMETOOLONG');
  t.same(treeOf(s.ws), []);
});

t.test('errors of the write steps map to fixed refusals', async (t) => {
  const errno = (code: string) => Object.assign(new Error(`${code}: open '/home/u/secret-dir'`), { code });
  for (const [code, expected] of [
    ['ENOENT', 'not_found'],
    ['ELOOP', 'symlink'],
    ['ENOTDIR', 'not_directory'],
    ['EISDIR', 'not_regular_file'],
    ['ENOTEMPTY', 'not_regular_file'],
    ['EEXIST', 'unwritable'],
    ['EACCES', 'unwritable'],
    ['EROFS', 'unwritable'],
    ['ENOSPC', 'unwritable'],
    ['EDQUOT', 'unwritable'],
    ['EIO', 'unwritable'],
    ['EMFILE', 'internal_error'],
  ] as const) {
    const refusal = writeRefusal(errno(code));
    t.ok(refusal instanceof WorkspaceToolFailure && refusal.code === expected, `${code} is ${expected}`);
    t.equal(refusal.message, WORKSPACE_TOOL_ERRORS[expected], `${code}: the system message is not carried`);
  }
  const decided = new WorkspaceToolFailure('changed');
  t.equal(writeRefusal(decided), decided, 'a refusal already decided passes through');
});
