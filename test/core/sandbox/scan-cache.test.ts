import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { nativeAddon } from '../../../core/endpoint/native.js';
import { SANDBOX_SCAN_LIMITS } from '../../../core/sandbox/command-limits.js';
import { ScanCache, type StatTree } from '../../../core/sandbox/scan-cache.js';
import { closeScan } from '../../../core/sandbox/scan-thread.js';
import {
  type ScanControl,
  type ScanLimits,
  type ScannedWorkspace,
  ScanRefusal,
  type ScanRequest,
  scanWorkspace,
} from '../../../core/sandbox/workspace-scan.js';

function scratch(t: Test): string {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), 'magi-scan-cache-test-')));
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

function request(workspace: string): ScanRequest {
  return {
    workspace,
    pinned: null,
    daemonHome: join(workspace, '..', 'magi-home-that-is-not-there'),
    hiddenDirectories: [],
    hiddenPaths: [],
    outsidePaths: [],
    socket: null,
  };
}

/** Ten seconds from now: every folder made by the test changed long before such a read. */
const later = () => BigInt(Date.now() + 10_000) * 1_000_000n;

/** A scan with the cache, reading the clock as `later` unless told otherwise; its descriptors closed. */
function scan(root: string, cache: ScanCache, control: ScanControl = {}): ScannedWorkspace {
  const result = scanWorkspace(request(root), { cache, now: later, ...control });
  closeScan(result);
  return result;
}

/** What is covered and bound read-only, relative to the workspace, sorted. */
function seen(root: string, result: ScannedWorkspace): string[] {
  const relative = (path: Uint8Array) =>
    Buffer.from(path)
      .toString('utf8')
      .slice(root.length + 1);
  return [
    ...result.covers.map((cover) => `cover ${relative(cover.path)}`),
    ...result.readOnly.map((entry) => `read-only ${relative(entry.path)}`),
  ].sort();
}

/** The native check, with the folders named hidden from what it reports: as if their ctimes had not moved. */
function hiding(root: string, ...folders: string[]): StatTree {
  return (rootFd, names, ends, depths, expected, changed) => {
    const count = nativeAddon().statTree(rootFd, names, ends, depths, expected, changed);
    const hidden = new Set(folders.map((folder) => lstatSync(join(root, folder), { bigint: true }).ino));
    const kept = [...changed.subarray(0, count)].filter((index) => !hidden.has(expected[3 * index + 1]!));
    changed.set(kept);
    return kept.length;
  };
}

const TREE = ['a/b/c/d/e/file', 'a/b/other/file', 'f/g/file', '.env', '.git/HEAD', 'a/b/c/id_rsa'];

t.test('a second scan reads nothing, and a change deep down reads that folder alone', async (t) => {
  const root = scratch(t);
  build(root, ...TREE);
  const cache = new ScanCache();
  const first = scan(root, cache);
  t.same(first.folders, { known: 10, read: 10 }, 'the workspace, its eight folders and .git');
  const expected = ['cover .env', 'cover a/b/c/id_rsa', 'read-only .git'];
  t.same(seen(root, first), expected);

  const second = scan(root, cache);
  t.same(second.folders, { known: 10, read: 0 }, 'every folder is as it was');
  t.same(seen(root, second), expected, 'and what is covered is the same');

  build(root, 'a/b/c/d/e/.env.local');
  const third = scan(root, cache);
  t.same(third.folders, { known: 10, read: 1 }, 'only the folder whose entries changed');
  t.same(seen(root, third), [...expected, 'cover a/b/c/d/e/.env.local'].sort());

  build(root, '.git/config');
  t.same(scan(root, cache).folders.read, 1, 'a config planted in .git');
  t.ok(seen(root, scan(root, cache)).includes('cover .git/config'));
});

t.test('a new secret is seen at any depth, in a new folder or an old one', async (t) => {
  const root = scratch(t);
  build(root, ...TREE);
  const cache = new ScanCache();
  scan(root, cache);
  const secrets = ['x/y/z/w/credentials.json', 'a/.npmrc', 'f/g/server.key', 'a/b/c/d/e/.aws/'];
  for (const secret of secrets) {
    build(root, secret);
    const found = seen(root, scan(root, cache));
    t.ok(found.includes(`cover ${secret.replace(/\/$/, '')}`), secret);
  }
  t.same(scan(root, cache).folders.read, 0, 'then nothing is read again');
});

t.test('a renamed folder is read again under its new name, its old name forgotten', async (t) => {
  const root = scratch(t);
  build(root, ...TREE);
  const cache = new ScanCache();
  scan(root, cache);
  renameSync(join(root, 'a/b'), join(root, 'a/moved'));
  const result = scan(root, cache);
  t.same(result.folders, { known: 10, read: 6 }, 'a, and moved with the four folders below it');
  t.ok(seen(root, result).includes('cover a/moved/c/id_rsa'));
  t.notOk(seen(root, result).includes('cover a/b/c/id_rsa'));
});

t.test('a folder replaced by another of the same name is read again, with what is below it', async (t) => {
  const root = scratch(t);
  build(root, ...TREE);
  const cache = new ScanCache();
  scan(root, cache);
  rmSync(join(root, 'a/b/c'), { recursive: true });
  build(root, 'a/b/c/d/e/file', 'a/b/c/d/.netrc');
  const result = scan(root, cache);
  t.same(result.folders.read, 4, 'b (its entries changed), and the new c, d and e');
  t.ok(seen(root, result).includes('cover a/b/c/d/.netrc'));
  t.notOk(seen(root, result).includes('cover a/b/c/id_rsa'), 'what the old folder held is gone');

  // Replaced behind its parent's back (the parent's change hidden from the check): its own identity tells.
  const behind = new ScanCache(hiding(root, 'a/b'));
  scan(root, behind);
  rmSync(join(root, 'a/b/c'), { recursive: true });
  build(root, 'a/b/c/.pgpass');
  t.ok(seen(root, scan(root, behind)).includes('cover a/b/c/.pgpass'));
});

t.test('a folder swapped for a symlink is not followed, and the folder moved away is found', async (t) => {
  const root = scratch(t);
  const outside = scratch(t);
  build(root, ...TREE);
  build(outside, 'elsewhere/.env');
  const cache = new ScanCache();
  scan(root, cache);
  renameSync(join(root, 'a/b'), join(root, 'f/g/b'));
  symlinkSync(join(outside, 'elsewhere'), join(root, 'a/b'));
  const found = seen(root, scan(root, cache));
  t.ok(found.includes('cover f/g/b/c/id_rsa'), 'the secret where the folder went');
  t.notOk(
    found.some((entry) => entry.startsWith('cover a/b')),
    'nothing through the symlink',
  );
  rmSync(join(root, 'a/b'));
  renameSync(join(root, 'f/g/b'), join(root, 'a/b'));
  t.same(seen(root, scan(root, cache)), seen(root, scan(root, new ScanCache())), 'as a fresh scan sees it');
});

t.test('a change within the timestamp granularity of a read is seen', async (t) => {
  const root = scratch(t);
  build(root, ...TREE);
  const ctime = lstatSync(join(root, 'f/g'), { bigint: true }).ctimeNs;

  // Read long after its last change, a folder whose ctime has not moved is trusted as it was: what a change
  // that kept its ctime (within the granularity of the clock that stamps it) would go unseen by.
  const trusting = new ScanCache(hiding(root, 'f/g'));
  scan(root, trusting);
  build(root, 'f/g/.env');
  t.notOk(seen(root, scan(root, trusting)).includes('cover f/g/.env'), 'a trusted listing is kept');
  rmSync(join(root, 'f/g/.env'));

  // Read within the granularity of its last change (here, at the very nanosecond of its ctime), a listing is
  // never trusted: the folder is read again at every scan, whatever its ctime says.
  const racy = new ScanCache(hiding(root, 'f/g'));
  const first = scan(root, racy, { now: () => ctime });
  t.same(first.folders.read, 10);
  const second = scan(root, racy, { now: () => ctime });
  t.same(second.folders.read, 10, 'every folder read as racily as this one is read again');
  build(root, 'f/g/.env');
  t.ok(seen(root, scan(root, racy)).includes('cover f/g/.env'), 'the change is seen');
  t.same(scan(root, racy).folders.read, 0, 'once read long after its change, it is trusted');
  for (const margin of [49_000_000n, 50_000_000n]) {
    const edge = new ScanCache();
    scan(root, edge, { now: () => lstatSync(join(root, 'f/g'), { bigint: true }).ctimeNs + margin });
    t.ok(scan(root, edge).folders.read > 0, `a folder changed ${margin / 1_000_000n} ms before its read`);
  }
  const trusted = new ScanCache();
  scan(root, trusted, { now: () => lstatSync(join(root, 'f/g'), { bigint: true }).ctimeNs + 2_000_000_000n });
  t.equal(scan(root, trusted).folders.read, 0, 'one changed well before it is trusted');
});

t.test('the bounds hold for what is kept as for what is read', async (t) => {
  const root = scratch(t);
  build(root, ...TREE);
  const cache = new ScanCache();
  scan(root, cache);
  const limits = (overrides: Partial<ScanLimits>): ScanLimits => ({
    ...SANDBOX_SCAN_LIMITS,
    ...overrides,
  });
  const refusal = (control: ScanControl) => {
    try {
      scan(root, cache, control);
      return null;
    } catch (error) {
      return error instanceof ScanRefusal ? error.reason : error;
    }
  };
  t.equal(refusal({ limits: limits({ directories: 9 }) }), 'workspace_too_large', 'folders kept count');
  t.equal(refusal({ limits: limits({ entries: 12 }) }), 'workspace_too_large', 'entries kept count');
  t.equal(refusal({ limits: limits({ depth: 4 }) }), 'workspace_too_large', 'depth kept counts');
  t.equal(refusal({ limits: limits({ marks: 3 }) }), 'workspace_too_large', 'marks kept count');
  t.equal(refusal({}), null, 'the tree is kept through refusals');
  t.same(scan(root, cache).folders.read, 0);

  build(root, 'f/g/h/i/');
  t.equal(refusal({ limits: limits({ directories: 11 }) }), 'workspace_too_large', 'a new folder past it');
  t.same(scan(root, cache).folders.read, 3, 'the tree from before the refusal is checked again');
});

t.test('a cache used for another workspace starts afresh', async (t) => {
  const one = scratch(t);
  const two = scratch(t);
  build(one, ...TREE);
  build(two, 'x/y/.env');
  const cache = new ScanCache();
  scan(one, cache);
  t.same(scan(two, cache).folders, { known: 3, read: 3 });
  t.same(seen(two, scan(two, cache)), ['cover x/y/.env']);
  t.same(scan(one, cache).folders.read, 10, 'and back');
});

const devpts = (() => {
  try {
    return statfsSync('/dev/pts').type === 0x1cd1;
  } catch {
    return false;
  }
})();

t.test(
  'a filesystem whose timestamps are not trusted has its folders read at every scan',
  { skip: devpts ? false : 'no devpts at /dev/pts here' },
  async (t) => {
    const cache = new ScanCache();
    t.same(scan('/dev/pts', cache).folders, { known: 1, read: 1 });
    t.same(
      scan('/dev/pts', cache).folders,
      { known: 1, read: 1 },
      'devpts: read again, however old its ctime',
    );
    const root = scratch(t);
    build(root, 'a/');
    const trusted = new ScanCache();
    scan(root, trusted);
    t.same(scan(root, trusted).folders, { known: 2, read: 0 }, 'where the workspace tests run: kept');
  },
);

/** Runs `work` as a user who cannot list a folder of mode 000 (nobody, when this process is root). */
function withoutOverride<T>(work: () => T): T {
  if (process.getuid?.() !== 0) return work();
  process.seteuid!(65_534);
  try {
    return work();
  } finally {
    process.seteuid!(0);
  }
}

t.test('a folder the daemon cannot list is covered whole, and read again once it can be', async (t) => {
  const root = scratch(t);
  chmodSync(root, 0o755);
  build(root, 'open/file', 'locked/.env', 'locked/inner/id_rsa');
  for (const folder of ['open', 'locked', 'locked/inner']) chmodSync(join(root, folder), 0o755);
  chmodSync(join(root, 'locked'), 0o000);
  t.teardown(() => chmodSync(join(root, 'locked'), 0o755));
  const cache = new ScanCache();
  const found = withoutOverride(() => seen(root, scan(root, cache)));
  t.same(found, ['cover locked'], 'what no walk has seen is hidden: a command could make it listable');
  t.same(
    withoutOverride(() => seen(root, scan(root, cache))),
    ['cover locked'],
    'at every scan',
  );
  chmodSync(join(root, 'locked'), 0o755);
  t.same(
    withoutOverride(() => seen(root, scan(root, cache))),
    ['cover locked/.env', 'cover locked/inner/id_rsa'],
    'once listable, it is walked',
  );
  build(root, 'repo/.git/config');
  chmodSync(join(root, 'repo'), 0o755);
  chmodSync(join(root, 'repo/.git'), 0o000);
  t.teardown(() => chmodSync(join(root, 'repo/.git'), 0o755));
  t.same(
    withoutOverride(() => seen(root, scan(root, cache))).filter((entry) => entry.includes('repo')),
    ['cover repo/.git'],
    'a .git folder that cannot be listed is covered, not bound read-only',
  );
  chmodSync(root, 0o000);
  t.throws(
    () => withoutOverride(() => scan(root, cache)),
    new ScanRefusal('workspace_unavailable'),
    'a workspace that cannot be listed is refused',
  );
  chmodSync(root, 0o755);
});
