import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CAPTURE_REFUSALS, type CaptureRefusal } from '../../../core/capture/refusals.js';
import {
  type CaptureWorkspaceFileOptions,
  captureWorkspaceFile,
  readWorkspaceFile,
} from '../../../core/capture/workspace-file.js';
import { WireError } from '../../../core/errors.js';

const SECRET = 'OUTSIDE-SECRET-7f3a';
const INSIDE = 'inside content\n';
const MAX = 64;

interface Sandbox {
  /** The workspace. */
  ws: string;
  /** A directory beside the workspace holding `secret.txt`. */
  outside: string;
  /** The daemon's state directory, beside the workspace. */
  state: string;
  capture(
    path: string,
    extra?: Partial<CaptureWorkspaceFileOptions>,
  ): ReturnType<typeof captureWorkspaceFile>;
}

function sandbox(t: Test): Sandbox {
  const base = mkdtempSync(join(tmpdir(), 'capture-'));
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  const state = join(base, 'state');
  for (const dir of [ws, outside, state]) mkdirSync(dir);
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  writeFileSync(join(state, 'history.txt'), SECRET);
  return {
    ws,
    outside,
    state,
    capture: (path, extra = {}) =>
      captureWorkspaceFile({ workspace: ws, path, maxBytes: MAX, excludedDirectories: [state], ...extra }),
  };
}

function refused(t: Test, run: () => unknown, cause: CaptureRefusal, name: string = cause): void {
  t.throws(run, { name: 'WireError', code: 'invalid_payload', message: CAPTURE_REFUSALS[cause] }, name);
}

function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

t.test('happy path: nested directories, exact bytes', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'a/b/c'), { recursive: true });
  const bytes = Buffer.from('{"input_schema":{}}\n\u00e9\u2603\r\n\t');
  writeFileSync(join(s.ws, 'a/b/c/tool.json'), bytes);
  const captured = s.capture('a/b/c/tool.json');
  t.ok(captured.bytes.equals(bytes));
  t.equal(captured.text, bytes.toString('utf8'));
  writeFileSync(join(s.ws, 'top.md'), INSIDE);
  t.equal(s.capture('top.md').text, INSIDE);
});

t.test('empty files and byte-order marks are captured as they are', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'empty.md'), '');
  t.equal(s.capture('empty.md').bytes.length, 0);
  writeFileSync(join(s.ws, 'bom.md'), '\ufeffhello');
  const captured = s.capture('bom.md');
  t.same([...captured.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  t.equal(captured.text, '\ufeffhello');
});

t.test('size: exactly maxBytes is accepted, one more byte is refused', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'exact.md'), 'x'.repeat(MAX));
  t.equal(s.capture('exact.md').bytes.length, MAX);
  writeFileSync(join(s.ws, 'over.md'), 'x'.repeat(MAX + 1));
  refused(t, () => s.capture('over.md'), 'too_large');
  writeFileSync(join(s.ws, 'large.md'), 'x'.repeat(1_000_000));
  refused(t, () => s.capture('large.md'), 'too_large', 'a file far larger than the source maximum');
  t.throws(() => s.capture('exact.md', { maxBytes: -1 }), RangeError);
  t.throws(() => s.capture('exact.md', { maxBytes: 1.5 }), RangeError);
  t.throws(() => s.capture('exact.md', { maxBytes: 1 << 20 }), RangeError, 'beyond the capture reservation');
});

t.test('symlinks are refused as the last and as a middle component', async (t) => {
  const s = sandbox(t);
  symlinkSync(join(s.outside, 'secret.txt'), join(s.ws, 'last.txt'));
  refused(t, () => s.capture('last.txt'), 'symlink', 'last component to outside');
  writeFileSync(join(s.ws, 'real.txt'), INSIDE);
  symlinkSync('real.txt', join(s.ws, 'relative.txt'));
  refused(t, () => s.capture('relative.txt'), 'symlink', 'last component to a file inside');
  symlinkSync(s.outside, join(s.ws, 'middle'));
  refused(t, () => s.capture('middle/secret.txt'), 'symlink', 'middle component to outside');
  mkdirSync(join(s.ws, 'd'));
  symlinkSync('.', join(s.ws, 'd/self'));
  writeFileSync(join(s.ws, 'd/f.txt'), INSIDE);
  refused(t, () => s.capture('d/self/f.txt'), 'symlink', 'middle component to a directory inside');
  symlinkSync('dangling-target', join(s.ws, 'dangling'));
  refused(t, () => s.capture('dangling'), 'symlink', 'dangling symlink');
});

t.test('a regular file used as a directory component is refused', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'file'), INSIDE);
  refused(t, () => s.capture('file/x'), 'not_directory');
  refused(t, () => s.capture('missing/x'), 'not_found');
  refused(t, () => s.capture('missing.txt'), 'not_found');
});

t.test('a middle directory swapped for a symlink during the walk is refused', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/secret.txt'), INSIDE);
  refused(
    t,
    () =>
      s.capture('a/b/secret.txt', {
        hooks: {
          afterDirectoryOpen(depth) {
            if (depth !== 1) return;
            renameSync(join(s.ws, 'a/b'), join(s.ws, 'a/b.orig'));
            symlinkSync(s.outside, join(s.ws, 'a/b'));
          },
        },
      }),
    'symlink',
  );
});

t.test(
  'a directory swapped after it was opened keeps serving the held directory, never the outside',
  async (t) => {
    const s = sandbox(t);
    mkdirSync(join(s.ws, 'a/b'), { recursive: true });
    writeFileSync(join(s.ws, 'a/b/secret.txt'), INSIDE);
    const captured = s.capture('a/b/secret.txt', {
      hooks: {
        afterDirectoryOpen(depth) {
          if (depth !== 2) return;
          renameSync(join(s.ws, 'a/b'), join(s.ws, 'a/b.orig'));
          symlinkSync(s.outside, join(s.ws, 'a/b'));
        },
      },
    });
    t.equal(captured.text, INSIDE);
    t.notOk(captured.bytes.includes(SECRET));
  },
);

t.test('the last component swapped between its check and its open is refused', async (t) => {
  const s = sandbox(t);
  const swapTo = (make: (path: string) => void) => ({
    hooks: {
      beforeFileOpen() {
        unlinkSync(join(s.ws, 'f.txt'));
        make(join(s.ws, 'f.txt'));
      },
    },
  });
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        swapTo((p) => symlinkSync(join(s.outside, 'secret.txt'), p)),
      ),
    'symlink',
  );
  unlinkSync(join(s.ws, 'f.txt'));
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        swapTo((p) => writeFileSync(p, INSIDE)),
      ),
    'changed',
    'another file',
  );
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  // O_NONBLOCK: without it this open would wait for a writer forever
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        swapTo((p) => execFileSync('mkfifo', [p])),
      ),
    'not_regular_file',
    'FIFO',
  );
  unlinkSync(join(s.ws, 'f.txt'));
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        swapTo((p) => mkdirSync(p)),
      ),
    'not_regular_file',
    'directory',
  );
  rmSync(join(s.ws, 'f.txt'), { recursive: true });
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        swapTo(() => {}),
      ),
    'not_found',
    'removed',
  );
});

t.test('hard links are refused', async (t) => {
  const s = sandbox(t);
  linkSync(join(s.outside, 'secret.txt'), join(s.ws, 'hard.txt'));
  refused(t, () => s.capture('hard.txt'), 'hard_linked', 'hard link to a file outside');
  writeFileSync(join(s.ws, 'one.txt'), INSIDE);
  linkSync(join(s.ws, 'one.txt'), join(s.ws, 'two.txt'));
  refused(t, () => s.capture('one.txt'), 'hard_linked', 'two names inside');
});

t.test('non-regular files are refused', async (t) => {
  const s = sandbox(t);
  execFileSync('mkfifo', [join(s.ws, 'fifo')]);
  refused(t, () => s.capture('fifo'), 'not_regular_file', 'FIFO');
  execFileSync('mknod', [join(s.ws, 'null'), 'c', '1', '3']);
  refused(t, () => s.capture('null'), 'not_regular_file', 'character device');
  mkdirSync(join(s.ws, 'dir'));
  refused(t, () => s.capture('dir'), 'not_regular_file', 'directory');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(join(s.ws, 'sock'), resolve));
  t.teardown(() => server.close());
  refused(t, () => s.capture('sock'), 'not_regular_file', 'unix socket');
});

t.test('lexically unsafe paths are refused before any open', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  refused(t, () => s.capture('../outside/secret.txt'), 'path_dot_component', '..');
  refused(t, () => s.capture('a/../f.txt'), 'path_dot_component', 'inner ..');
  refused(t, () => s.capture('./f.txt'), 'path_dot_component', '.');
  refused(t, () => s.capture(join(s.outside, 'secret.txt')), 'path_absolute');
  refused(t, () => s.capture(''), 'path_empty_component', 'empty path');
  refused(t, () => s.capture('a//f.txt'), 'path_empty_component');
  refused(t, () => s.capture(`${'d/'.repeat(512)}f`), 'path_too_long', '1,025-byte path');
  refused(t, () => s.capture('f.txt\0'), 'path_forbidden_character', 'NUL in the path');
});

t.test('content must be UTF-8 without NUL', async (t) => {
  const s = sandbox(t);
  const cases: [string, number[]][] = [
    ['truncated', [0x61, 0xe2, 0x98]],
    ['lone continuation', [0x80]],
    ['overlong slash', [0xc0, 0xaf]],
    ['encoded surrogate', [0xed, 0xa0, 0x80]],
    ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['latin-1', [0x63, 0x61, 0x66, 0xe9]],
  ];
  for (const [name, bytes] of cases) {
    writeFileSync(join(s.ws, 'bad.txt'), Buffer.from(bytes));
    refused(t, () => s.capture('bad.txt'), 'not_utf8', name);
  }
  writeFileSync(join(s.ws, 'nul.txt'), 'before\0after');
  refused(t, () => s.capture('nul.txt'), 'contains_nul');
});

t.test('credential-like paths are refused even when the file is ordinary', async (t) => {
  const s = sandbox(t);
  for (const path of ['.env', 'config/.env.local', '.ssh/id_rsa', 'certs/server.PEM', '.git/config']) {
    mkdirSync(join(s.ws, path, '..'), { recursive: true });
    writeFileSync(join(s.ws, path), INSIDE);
    refused(t, () => s.capture(path), 'credential_path', path);
  }
  refused(t, () => s.capture('.docker/config.json'), 'credential_path', 'refused without touching the disk');
});

t.test('the daemon state directory is refused wherever it meets the path', async (t) => {
  const s = sandbox(t);
  const inner = join(s.ws, 'state');
  mkdirSync(inner);
  writeFileSync(join(inner, 'history.txt'), SECRET);
  refused(t, () => s.capture('state/history.txt', { excludedDirectories: [inner] }), 'excluded_directory');
  t.equal(s.capture('state/history.txt').text, SECRET, 'the same directory is ordinary when not excluded');

  refused(
    t,
    () => s.capture('history.txt', { workspace: s.state }),
    'excluded_directory',
    'workspace is state',
  );
  const below = join(s.state, 'sessions/one');
  mkdirSync(below, { recursive: true });
  writeFileSync(join(below, 'notes.md'), INSIDE);
  refused(
    t,
    () => s.capture('notes.md', { workspace: below }),
    'excluded_directory',
    'workspace below state',
  );

  const missing = join(s.ws, 'no-such-state');
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  t.equal(
    s.capture('f.txt', { excludedDirectories: [missing] }).text,
    INSIDE,
    'a missing state dir is ignored',
  );
});

t.test('below daemon state, the walk up refuses whatever the file itself would earn', async (t) => {
  const s = sandbox(t);
  const below = join(s.state, 'sessions/one');
  mkdirSync(join(below, 'dir'), { recursive: true });
  writeFileSync(join(below, 'nul.txt'), 'a\u0000b');
  symlinkSync(join(s.outside, 'secret.txt'), join(below, 'link.txt'));
  for (const [path, elsewhere] of [
    ['missing.txt', 'not_found'],
    ['nul.txt', 'contains_nul'],
    ['link.txt', 'symlink'],
    ['dir/missing.txt', 'not_found'],
    ['dir', 'not_regular_file'],
  ] as const) {
    refused(t, () => s.capture(path, { workspace: below }), 'excluded_directory', path);
    refused(
      t,
      () => s.capture(path, { workspace: below, excludedDirectories: [] }),
      elsewhere,
      `${path} elsewhere`,
    );
  }
});

t.test(
  'readWorkspaceFile hands over the bytes before the checks that can wait, which finish() runs',
  async (t) => {
    const s = sandbox(t);
    writeFileSync(join(s.ws, 'f.txt'), INSIDE);
    const before = openFdCount();
    const read = readWorkspaceFile({
      workspace: s.ws,
      path: 'f.txt',
      maxBytes: MAX,
      excludedDirectories: [s.state],
    });
    t.equal(read.text, INSIDE);
    t.same(read.bytes, Buffer.from(INSIDE));
    t.equal(openFdCount(), before + 2, 'the workspace root and the file are held for the checks still due');
    read.finish();
    t.equal(openFdCount(), before, 'finish() lets go of it');

    const below = join(s.state, 'sessions/two');
    mkdirSync(below, { recursive: true });
    writeFileSync(join(below, 'notes.md'), INSIDE);
    const early = readWorkspaceFile({
      workspace: below,
      path: 'notes.md',
      maxBytes: MAX,
      excludedDirectories: [s.state],
    });
    t.equal(early.text, INSIDE, 'the bytes are read before their place is judged');
    refused(t, () => early.finish(), 'excluded_directory', 'and finish() refuses them');
    t.equal(openFdCount(), before, 'a refusing finish() lets go of the root too');
  },
);

t.test('the checks that wait for finish() still refuse, and in their original order', async (t) => {
  const s = sandbox(t);
  const file = join(s.ws, 'f.txt');
  const options = { workspace: s.ws, path: 'f.txt', maxBytes: MAX, excludedDirectories: [s.state] };
  writeFileSync(file, INSIDE);
  const read = readWorkspaceFile(options);
  appendFileSync(file, 'more');
  refused(t, () => read.finish(), 'changed', 'a change after the read is seen at finish()');

  writeFileSync(file, 'a\u0000b');
  const withNul = readWorkspaceFile(options);
  t.equal(withNul.text, 'a\u0000b', 'the bytes are handed over');
  refused(t, () => withNul.finish(), 'contains_nul', 'and refused at finish()');

  writeFileSync(file, Buffer.from([0x61, 0xff]));
  refused(t, () => s.capture('f.txt'), 'not_utf8');
  for (const [content, what] of [
    [Buffer.from([0x61, 0xff]), 'the text that cannot be decoded'],
    ['a\u0000b', 'a NUL'],
  ] as const) {
    writeFileSync(file, content);
    const growing = { hooks: { afterRead: () => appendFileSync(file, 'x') } };
    refused(t, () => s.capture('f.txt', growing), 'changed', `a change outranks ${what}`);
  }
});

t.test('the workspace root is opened once, following a symlink the user chose', async (t) => {
  const s = sandbox(t);
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
  const alias = join(s.ws, '..', 'alias');
  symlinkSync(s.ws, alias);
  t.equal(s.capture('f.txt', { workspace: alias }).text, INSIDE);
  refused(t, () => s.capture('f.txt', { workspace: join(s.ws, 'missing') }), 'workspace_unavailable');
  refused(t, () => s.capture('f.txt', { workspace: 'relative/ws' }), 'workspace_unavailable');
  refused(t, () => s.capture('f.txt', { workspace: join(s.ws, 'f.txt') }), 'workspace_unavailable', 'a file');
});

t.test('a file changed during the read is refused', async (t) => {
  const s = sandbox(t);
  const file = join(s.ws, 'f.txt');
  const afterRead = (change: () => void) => ({ hooks: { afterRead: change } });
  const fresh = () => {
    rmSync(file, { force: true });
    writeFileSync(file, INSIDE);
  };
  fresh();
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        afterRead(() => appendFileSync(file, 'more')),
      ),
    'changed',
    'appended',
  );
  fresh();
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        afterRead(() => utimesSync(file, new Date(0), new Date(0))),
      ),
    'changed',
    'mtime set',
  );
  fresh();
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        afterRead(() => {
          writeFileSync(`${file}.new`, INSIDE);
          renameSync(`${file}.new`, file);
        }),
      ),
    'changed',
    'replaced by rename with identical content',
  );
  fresh();
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        afterRead(() => linkSync(file, `${file}.2`)),
      ),
    'changed',
    'hard link added',
  );
  rmSync(`${file}.2`);
  fresh();
  refused(
    t,
    () =>
      s.capture(
        'f.txt',
        afterRead(() => unlinkSync(file)),
      ),
    'changed',
    'removed',
  );
  fresh();
  t.equal(s.capture('f.txt').text, INSIDE, 'unchanged capture still succeeds');
});

t.test('every descriptor is closed on every outcome, and no message carries the path', async (t) => {
  const s = sandbox(t);
  mkdirSync(join(s.ws, 'a/b'), { recursive: true });
  writeFileSync(join(s.ws, 'a/b/ok.txt'), INSIDE);
  writeFileSync(join(s.ws, 'a/b/big.txt'), 'x'.repeat(MAX + 1));
  writeFileSync(join(s.ws, 'a/b/nul.txt'), '\0');
  execFileSync('mkfifo', [join(s.ws, 'a/b/fifo')]);
  symlinkSync(s.outside, join(s.ws, 'a/link'));
  const paths = ['a/b/ok.txt', 'a/b/big.txt', 'a/b/nul.txt', 'a/b/fifo', 'a/link/secret.txt', 'a/b/missing'];
  const messages = new Set<string>(Object.values(CAPTURE_REFUSALS));
  const before = openFdCount();
  for (let round = 0; round < 20; round += 1) {
    for (const path of paths) {
      try {
        s.capture(path);
      } catch (error) {
        if (!(error instanceof WireError) || !messages.has(error.message)) throw error;
      }
    }
    try {
      s.capture('a/b/ok.txt', { workspace: s.state });
    } catch (error) {
      if (!(error instanceof WireError)) throw error;
    }
  }
  t.equal(openFdCount(), before);
});

const SWAPPER = `
const fs = require('node:fs');
const [d, dLink, dDir, g, gLink, gFile] = process.argv.slice(1);
process.stdout.write('ready\\n');
for (;;) {
  fs.renameSync(d, dDir); fs.renameSync(dLink, d);
  fs.renameSync(g, gFile); fs.renameSync(gLink, g);
  fs.renameSync(d, dLink); fs.renameSync(dDir, d);
  fs.renameSync(g, gLink); fs.renameSync(gFile, g);
}
`;

t.test(
  'race: directories and files swapped with symlinks during thousands of captures never leak',
  async (t) => {
    const s = sandbox(t);
    const race = join(s.ws, 'race');
    mkdirSync(join(race, 'd'), { recursive: true });
    writeFileSync(join(race, 'd/f.txt'), INSIDE);
    symlinkSync(s.outside, join(race, 'd.link'));
    writeFileSync(join(s.outside, 'f.txt'), SECRET);
    writeFileSync(join(race, 'g.txt'), INSIDE);
    symlinkSync(join(s.outside, 'secret.txt'), join(race, 'g.link'));
    const names = ['d', 'd.link', 'd.dir', 'g.txt', 'g.link', 'g.file'].map((name) => join(race, name));

    const swapper = spawn(process.execPath, ['-e', SWAPPER, ...names], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => swapper.once('exit', () => resolve()));
    t.teardown(async () => {
      swapper.kill('SIGKILL');
      await exited;
    });
    await new Promise<void>((resolve) => swapper.stdout.once('data', () => resolve()));

    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    for (let i = 0; i < 4_000; i += 1) {
      try {
        const captured = s.capture(i % 2 === 0 ? 'race/d/f.txt' : 'race/g.txt');
        if (captured.bytes.includes(SECRET) || captured.text !== INSIDE)
          t.fail('captured bytes other than inside');
        count('captured');
      } catch (error) {
        if (!(error instanceof WireError) || error.code !== 'invalid_payload') throw error;
        count(error.message);
      }
    }
    t.equal(swapper.exitCode, null, 'the swapper ran throughout');
    t.ok((outcomes.get('captured') ?? 0) > 0, 'some captures raced past the swaps and succeeded');
    t.ok((outcomes.get(CAPTURE_REFUSALS.symlink) ?? 0) > 0, 'some captures met a swapped-in symlink');
    t.comment(JSON.stringify(Object.fromEntries(outcomes)));
  },
);
