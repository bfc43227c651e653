import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { SANDBOX_SCAN_LIMITS } from '../../../core/sandbox/command-limits.js';
import { closeScan, scanDescriptors } from '../../../core/sandbox/scan-thread.js';
import {
  type SandboxPath,
  type ScanControl,
  type ScanLimits,
  ScanRefusal,
  type ScanRequest,
  scanWorkspace,
  type WorkspaceScan,
} from '../../../core/sandbox/workspace-scan.js';

/** A fresh real directory (the scan reports real paths). */
function scratch(t: Test): string {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), 'magi-scan-test-')));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** Makes each path under `root`: a folder when it ends with `/`, else a file. */
function build(root: string, ...paths: string[]): void {
  for (const path of paths) {
    if (path.endsWith('/')) mkdirSync(join(root, path), { recursive: true });
    else {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), 'x');
    }
  }
}

function request(workspace: string, overrides: Partial<ScanRequest> = {}): ScanRequest {
  return {
    workspace,
    pinned: null,
    daemonHome: join(workspace, '..', 'magi-home-that-is-not-there'),
    hiddenDirectories: [],
    hiddenPaths: [],
    outsidePaths: [],
    socket: null,
    ...overrides,
  };
}

function scan(t: Test, scanRequest: ScanRequest, control?: ScanControl): WorkspaceScan {
  const result = scanWorkspace(scanRequest, control);
  t.teardown(() => closeScan(result));
  return result;
}

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

/**
 * The refusal's reason, or null when the scan succeeds (its descriptors are closed then); either way the
 * number of open descriptors is checked to be what it was before.
 */
function refusal(t: Test, scanRequest: ScanRequest, control?: ScanControl): string | null {
  const before = openDescriptors();
  let reason: string | null = null;
  try {
    for (const fd of scanDescriptors(scanWorkspace(scanRequest, control))) closeSync(fd);
  } catch (error) {
    if (!(error instanceof ScanRefusal)) throw error;
    reason = error.reason;
  }
  t.equal(openDescriptors(), before, 'no descriptor is left open');
  return reason;
}

function limits(overrides: Partial<ScanLimits>): ScanLimits {
  return { ...SANDBOX_SCAN_LIMITS, ...overrides };
}

function relative(root: string, path: SandboxPath): string {
  const text = Buffer.from(path).toString('utf8');
  return text === root ? '.' : text.slice(root.length + 1);
}

/** The covers relative to the workspace with their kind, sorted (the walk follows the listing's order). */
function covers(root: string, result: WorkspaceScan): string[] {
  return result.covers.map((entry) => `${relative(root, entry.path)} ${entry.kind}`).sort();
}

function depth(path: string): number {
  return path.split('/').length;
}

/** The paths relative to the workspace, checked to come outermost first; sorted for comparison. */
function outermostFirst(t: Test, root: string, held: WorkspaceScan['pins']): string[] {
  const paths = held.map((entry) => relative(root, entry.path));
  t.ok(
    paths.every((path, index) => index === 0 || depth(paths[index - 1]!) <= depth(path)),
    `outermost first: ${paths.join(', ')}`,
  );
  return [...paths].sort();
}

function target(fd: number): string {
  return readlinkSync(`/proc/self/fd/${fd}`);
}

t.test('a workspace that cannot be confined is refused, with nothing left open', async (t) => {
  const root = scratch(t);
  const home = join(root, 'magi');
  build(root, 'magi/state/', 'project/', 'file');
  symlinkSync('/', join(root, 'to-root'));
  symlinkSync(home, join(root, 'to-home'));
  symlinkSync(join(home, 'state'), join(root, 'to-state'));
  const asked = (workspace: string) => request(workspace, { daemonHome: home });
  t.equal(refusal(t, asked('/')), 'workspace_not_allowed', 'the filesystem root');
  t.equal(refusal(t, asked(join(root, 'to-root'))), 'workspace_not_allowed', 'a symlink to the root');
  t.equal(refusal(t, asked(home)), 'workspace_not_allowed', "the daemon's home");
  t.equal(refusal(t, asked(join(home, 'state'))), 'workspace_not_allowed', 'a folder inside the home');
  t.equal(refusal(t, asked(join(root, 'to-home'))), 'workspace_not_allowed', 'a symlink to the home');
  t.equal(refusal(t, asked(join(root, 'to-state'))), 'workspace_not_allowed', 'a symlink into it');
  t.equal(refusal(t, asked(join(root, 'missing'))), 'workspace_unavailable', 'a missing workspace');
  t.equal(refusal(t, asked(join(root, 'file'))), 'workspace_unavailable', 'a file');
  t.equal(refusal(t, asked('project')), 'workspace_unavailable', 'a relative path');
  t.equal(refusal(t, asked(join(root, 'project'))), null, 'a folder beside the home is fine');
  t.equal(refusal(t, asked(root)), null, 'and so is one holding the home');
});

t.test('the workspace is held at its real path, whatever path named it', async (t) => {
  const root = scratch(t);
  build(root, 'real/');
  symlinkSync(join(root, 'real'), join(root, 'link'));
  const result = scan(t, request(join(root, 'link')));
  t.equal(Buffer.from(result.root.path).toString(), join(root, 'real'));
  t.equal(target(result.root.fd), join(root, 'real'));
});

t.test(
  'credential-like files and folders are covered at depths 1 to 3, the folders above pinned',
  async (t) => {
    const root = scratch(t);
    build(
      root,
      '.env',
      'README.md',
      'a/.ssh/id_ed25519',
      'a/.ssh/.git/config',
      'a/b/ID_RSA',
      'a/b/notes.txt',
      'a/b/c/server.pem',
      'a/b/c/deep/',
      '.docker/config.json',
      '.docker/other.json',
      '.config/gh/hosts.yml',
      '.config/other/settings.json',
      'plain/file.txt',
    );
    const result = scan(t, request(root));
    t.same(covers(root, result), [
      '.config/gh directory',
      '.docker/config.json file',
      '.env file',
      'a/.ssh directory',
      'a/b/ID_RSA file',
      'a/b/c/server.pem file',
    ]);
    t.same(outermostFirst(t, root, result.pins), ['.config', '.docker', 'a', 'a/b', 'a/b/c']);
    t.same(result.readOnly, [], 'nothing below a covered folder is walked, not even a repository');
    t.same(result.outside, []);
    t.equal(target(result.root.fd), root, 'the root is held open');
    for (const pin of result.pins)
      t.equal(target(pin.fd), Buffer.from(pin.path).toString(), 'each pin is held');
  },
);

t.test('the descriptors handed out are close-on-exec, so no other child inherits them', async (t) => {
  const root = scratch(t);
  build(root, 'a/.env', '.git/config');
  const result = scan(t, request(root));
  t.equal(scanDescriptors(result).length, 3);
  for (const fd of scanDescriptors(result)) {
    const flags = /flags:\s+(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!;
    t.ok(Number.parseInt(flags, 8) & 0o2000000, `${target(fd)} has O_CLOEXEC`);
  }
});

t.test(
  'a .git folder is bound read-only with its configs covered, and nothing inside it pinned',
  async (t) => {
    const root = scratch(t);
    build(
      root,
      '.git/config',
      '.git/config.worktree',
      '.git/HEAD',
      '.git/.env',
      '.git/hooks/post-checkout',
      '.git/objects/config',
      '.git/refs/config',
      '.git/modules/lib/config',
      '.git/modules/lib/objects/config',
      '.git/modules/lib/modules/inner/CONFIG',
      '.git/worktrees/feature/config.worktree',
      '.git/worktrees/feature/objects/config',
      'sub/dir/.git/config',
      'sub/dir/.git/info/exclude',
      'lib/.git',
    );
    const result = scan(t, request(root));
    t.same(outermostFirst(t, root, result.readOnly), ['.git', 'lib/.git', 'sub/dir/.git'], 'a .git file too');
    t.same(outermostFirst(t, root, result.pins), ['lib', 'sub', 'sub/dir'], 'only the folders above them');
    t.same(
      covers(root, result),
      [
        '.git/config file',
        '.git/config.worktree file',
        '.git/modules/lib/config file',
        '.git/modules/lib/modules/inner/CONFIG file',
        '.git/worktrees/feature/config.worktree file',
        'sub/dir/.git/config file',
      ],
      'the configs of the repository, its submodules and worktrees, none under objects, refs or hooks',
    );
    for (const entry of result.readOnly) t.equal(target(entry.fd), Buffer.from(entry.path).toString());
  },
);

t.test("the daemon's home and the socket's folder are covered wherever the walk meets them", async (t) => {
  const root = scratch(t);
  const workspace = join(root, 'workspace');
  build(
    workspace,
    'state/magi/.env',
    'state/magi/config.json',
    'run/socket-folder/magid.sock',
    'src/index.ts',
  );
  // Both are named by paths outside the workspace: only their identity can find them.
  symlinkSync(join(workspace, 'state', 'magi'), join(root, 'home-link'));
  symlinkSync(join(workspace, 'run', 'socket-folder'), join(root, 'socket-link'));
  const result = scan(
    t,
    request(workspace, {
      daemonHome: join(root, 'home-link'),
      hiddenDirectories: [join(root, 'socket-link'), join(root, 'missing')],
    }),
  );
  t.same(covers(workspace, result), ['run/socket-folder directory', 'state/magi directory']);
  t.same(outermostFirst(t, workspace, result.pins), ['run', 'state']);
});

t.test('what is outside the workspace is listed to cover when it exists now', async (t) => {
  const root = scratch(t);
  const workspace = join(root, 'workspace');
  build(root, 'workspace/', 'magi/', 'readable/credentials', 'sockets/magid.sock');
  symlinkSync(join(root, 'readable', 'credentials'), join(root, 'readable', 'linked'));
  const socket = { directory: join(root, 'sockets'), path: join(root, 'sockets', 'magid.sock') };
  const result = scan(
    t,
    request(workspace, {
      daemonHome: join(root, 'magi'),
      outsidePaths: [
        join(root, 'magi'),
        join(root, 'readable', 'credentials'),
        join(root, 'readable', 'missing'),
        join(root, 'readable', 'linked'),
      ],
      socket,
    }),
  );
  t.same(result.outside, [
    { path: join(root, 'magi'), kind: 'directory' },
    { path: join(root, 'readable', 'credentials'), kind: 'file' },
    { path: socket.directory, kind: 'directory' },
  ]);

  // A workspace inside the socket's folder keeps that folder: the socket alone is covered.
  const inside = join(root, 'sockets', 'project');
  build(inside, 'README.md');
  t.same(scan(t, request(inside, { socket })).outside, [{ path: socket.path, kind: 'file' }]);
  t.same(scan(t, request(socket.directory, { socket })).outside, [{ path: socket.path, kind: 'file' }]);
});

t.test("the user's credential places inside the workspace are covered", async (t) => {
  const home = scratch(t);
  build(
    home,
    '.cache/huggingface/token',
    '.cache/other/',
    '.local/bin/tool',
    '.mozilla/firefox/profile/',
    'notes/link-target',
  );
  symlinkSync(join(home, 'notes', 'link-target'), join(home, '.claude.json'));
  const result = scan(
    t,
    request(home, {
      hiddenPaths: [
        join(home, '.cache', 'huggingface', 'token'),
        join(home, '.cache', 'huggingface', 'stored_tokens'),
        // Its folder .local exists and .local/share does not.
        join(home, '.local', 'share', 'keyrings'),
        join(home, '.mozilla'),
        join(home, '.claude.json'),
        join(home, '.codex', 'auth.json'),
        home,
        `${home}-other/.ssh`,
        '/etc/.ssh',
      ],
    }),
  );
  t.same(covers(home, result), ['.cache/huggingface/token file', '.mozilla directory'], 'a symlink is not');
  t.same(outermostFirst(t, home, result.pins), ['.cache', '.cache/huggingface']);
});

t.test('the configs of repositories above the workspace are covered, up to the bound', async (t) => {
  const root = scratch(t);
  build(root, '.git/config', '.git/config.worktree', '.git/HEAD', 'a/b/project/', 'a/.git');
  const result = scan(t, request(join(root, 'a', 'b', 'project')));
  t.same(
    result.covers.map((entry) => Buffer.from(entry.path).toString()),
    [join(root, '.git', 'config'), join(root, '.git', 'config.worktree')],
    'a .git file above has no config of its own to cover',
  );
  t.same(result.readOnly, [], 'outside the workspace the root is read-only already');

  const nested = (levels: number) => join(root, ...Array.from({ length: levels }, () => 'n'));
  const bound = SANDBOX_SCAN_LIMITS.depth_above;
  mkdirSync(nested(bound + 1), { recursive: true });
  t.same(scan(t, request(nested(bound))).covers.length, 2, `a repository ${bound} folders above is found`);
  t.same(scan(t, request(nested(bound + 1))).covers.length, 0, `one ${bound + 1} folders above is not`);
});

t.test('symlinks are never followed, whatever their name', async (t) => {
  const root = scratch(t);
  const workspace = join(root, 'workspace');
  build(root, 'outside/.env', 'outside/.git/config', 'workspace/real/.env');
  symlinkSync(join(root, 'outside'), join(workspace, 'outside-link'));
  symlinkSync(join(workspace, 'real'), join(workspace, 'inner-link'));
  symlinkSync(join(root, 'outside', '.git'), join(workspace, '.git'));
  symlinkSync(join(root, 'outside', '.env'), join(workspace, '.env'));
  symlinkSync('/', join(workspace, 'to-root'));
  const result = scan(t, request(workspace));
  t.same(covers(workspace, result), ['real/.env file'], 'only the file in a real folder');
  t.same(result.readOnly, [], 'a symlink named .git is not bound');
  t.same(outermostFirst(t, workspace, result.pins), ['real']);
});

t.test('names that are not UTF-8 are kept as the bytes they are', async (t) => {
  const root = scratch(t);
  const folder = Buffer.from([0x61, 0xff, 0x62]);
  const base = Buffer.from(root);
  const slash = Buffer.from('/');
  mkdirSync(Buffer.concat([base, slash, folder]));
  writeFileSync(Buffer.concat([base, slash, folder, Buffer.from('/.env')]), 'x');
  const secret = Buffer.concat([Buffer.from('.ENV'), Buffer.from([0xe9])]);
  writeFileSync(Buffer.concat([base, slash, secret]), 'x');
  const result = scan(t, request(root));
  t.same(
    result.covers.map((entry) => Buffer.from(entry.path).toString('hex')).sort(),
    [Buffer.concat([base, slash, folder, Buffer.from('/.env')]), Buffer.concat([base, slash, secret])]
      .map((path) => path.toString('hex'))
      .sort(),
  );
  t.same(
    result.pins.map((pin) => Buffer.from(pin.path).toString('hex')),
    [Buffer.concat([base, slash, folder]).toString('hex')],
  );
  t.equal(
    readlinkSync(`/proc/self/fd/${result.pins[0]!.fd}`, { encoding: 'buffer' }).toString('hex'),
    Buffer.concat([base, slash, folder]).toString('hex'),
  );
});

t.test('folders below the workspace: at the bound and one past it', async (t) => {
  const root = scratch(t);
  const bound = SANDBOX_SCAN_LIMITS.depth;
  const at = scratch(t);
  mkdirSync(join(at, ...Array.from({ length: bound }, () => 'd')), { recursive: true });
  t.equal(refusal(t, request(at)), null, `${bound} levels are walked`);
  mkdirSync(join(root, ...Array.from({ length: bound + 1 }, () => 'd')), { recursive: true });
  t.equal(refusal(t, request(root)), 'workspace_too_large', `${bound + 1} are refused`);
});

t.test('marks: at the bound and one past it, the pins counted with them', async (t) => {
  const bound = SANDBOX_SCAN_LIMITS.marks;
  const root = scratch(t);
  // One process makes them all: a file at a time costs as much as the scan itself many times over.
  execFileSync(
    'touch',
    Array.from({ length: bound }, (_, index) => `.env.${index}`),
    { cwd: root },
  );
  t.equal(refusal(t, request(root)), null, `${bound} covered files`);
  writeFileSync(join(root, `.env.${bound}`), '');
  t.equal(refusal(t, request(root)), 'workspace_too_large', `${bound + 1} are refused`);

  const small = limits({ marks: 3 });
  const chain = scratch(t);
  build(chain, 'a/b/.env');
  t.equal(refusal(t, request(chain), { limits: small }), null, 'one cover and two pins make three');
  build(chain, 'a/b/c/.env');
  t.equal(refusal(t, request(chain), { limits: small }), 'workspace_too_large', 'two covers and three pins');
  const repositories = scratch(t);
  build(repositories, 'one/.git/HEAD', 'two/.git/HEAD');
  t.equal(
    refusal(t, request(repositories), { limits: limits({ marks: 4 }) }),
    null,
    'two read-only folders and their two pins',
  );
  build(repositories, 'three/.git/HEAD');
  t.equal(
    refusal(t, request(repositories), { limits: limits({ marks: 4 }) }),
    'workspace_too_large',
    'a third, with the read-only folders held open until the refusal',
  );
});

t.test('folders read: at the bound and one past it', async (t) => {
  const root = scratch(t);
  // The workspace, five folders and a .git folder, which is read too.
  build(root, 'a/', 'b/', 'c/', 'd/d/', '.git/HEAD');
  t.equal(refusal(t, request(root), { limits: limits({ directories: 7 }) }), null, 'seven folders');
  t.equal(refusal(t, request(root), { limits: limits({ directories: 6 }) }), 'workspace_too_large', 'six');
  t.ok(SANDBOX_SCAN_LIMITS.directories >= 10_000, 'the real bound allows a large repository');
});

t.test('entries listed: at the bound and one past it', async (t) => {
  const root = scratch(t);
  // Four entries in the workspace, three in a/ and one in a/b/: eight in all.
  build(root, 'one', 'two', 'three', 'a/b/c', 'a/x', 'a/y');
  t.equal(refusal(t, request(root), { limits: limits({ entries: 8 }) }), null, 'eight entries');
  t.equal(refusal(t, request(root), { limits: limits({ entries: 7 }) }), 'workspace_too_large', 'seven');
});

t.test('a walk asked to stop ends with a refusal and every descriptor closed', async (t) => {
  const root = scratch(t);
  build(root, '.git/HEAD', 'a/b/c/d/.env', 'e/.git/HEAD', 'f/g/h/');
  t.equal(
    refusal(t, request(root), { stopped: () => true }),
    'workspace_unavailable',
    'before the first folder',
  );
  for (const after of [2, 4, 6]) {
    let asked = 0;
    const stopped = () => {
      asked += 1;
      return asked > after;
    };
    t.equal(refusal(t, request(root), { stopped }), 'workspace_unavailable', `after ${after} folders`);
  }
  let asked = 0;
  t.equal(
    refusal(t, request(root), {
      stopped: () => {
        asked += 1;
        return false;
      },
    }),
    null,
  );
  t.equal(asked, 11, 'asked once before each folder is read');
});
