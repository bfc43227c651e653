import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { homeCredentialPaths } from '../../../core/confinement/home-credential-paths.js';
import {
  COMMAND_PATH,
  isInside,
  READABLE_HOME_PATHS,
  resolveSandboxView,
  type SandboxViewOptions,
} from '../../../core/sandbox/sandbox-view.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

/**
 * A fresh real folder apart from every place a command sees emptied (/tmp, /var/tmp, /run, /dev/shm), so that
 * a home or runtime folder made in it is a place of its own: the ignored test output folder of the project,
 * or, for a checkout that lies in one of those places, a folder in the user's cache.
 */
function apart(t: Tap): string {
  const base = [join(process.cwd(), '.tap'), join(homedir(), '.cache')].find((candidate) => {
    mkdirSync(candidate, { recursive: true });
    const real = realpathSync(candidate);
    return !SHARED_PLACES.some((place) => isInside(real, place));
  });
  if (base === undefined) throw new Error('no folder apart from the shared places to test in');
  const directory = realpathSync(mkdtempSync(join(base, 'magi-view-test-')));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

function make(root: string, ...paths: string[]): void {
  for (const path of paths) {
    if (path.endsWith('/')) mkdirSync(join(root, path), { recursive: true });
    else {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), '');
    }
  }
}

function options(overrides: Partial<SandboxViewOptions>): SandboxViewOptions {
  return {
    daemonHome: '/nonexistent/magi-home',
    socketPath: null,
    userHome: null,
    runtimeDirectory: null,
    readablePaths: [],
    searchPath: '',
    ...overrides,
  };
}

/** The shared places as this machine has them: real paths, each once (/var/run is /run on most systems). */
const SHARED_PLACES = [
  ...new Set(
    ['/tmp', '/var/tmp', '/run', '/var/run', '/dev/shm'].filter(existsSync).map((p) => realpathSync(p)),
  ),
];

t.test('the emptied places: the shared ones, the runtime folder and the home, outermost only', async (t) => {
  const root = apart(t);
  make(root, 'ada/', 'runtime/', 'real-home/');
  symlinkSync(join(root, 'real-home'), join(root, 'linked-home'));

  const view = await resolveSandboxView(
    options({ userHome: join(root, 'ada'), runtimeDirectory: join(root, 'runtime') }),
  );
  t.same(view.emptied, [...SHARED_PLACES, join(root, 'runtime'), join(root, 'ada')]);
  t.equal(view.userHome, join(root, 'ada'));

  const nested = await resolveSandboxView(
    options({ userHome: join(root, 'ada'), runtimeDirectory: join(root, 'ada', 'run') }),
  );
  t.same(nested.emptied, [...SHARED_PLACES, join(root, 'ada')], 'a place inside another is not listed');
  make(root, 'ada/run/');
  const inside = await resolveSandboxView(
    options({ userHome: join(root, 'ada'), runtimeDirectory: join(root, 'ada', 'run') }),
  );
  t.same(inside.emptied, [...SHARED_PLACES, join(root, 'ada')], 'even when it exists');

  const shared = await resolveSandboxView(options({ userHome: join(root, 'ada'), runtimeDirectory: '/run' }));
  t.same(shared.emptied, [...SHARED_PLACES, join(root, 'ada')], 'a runtime folder that is /run is /run');

  const linked = await resolveSandboxView(options({ userHome: join(root, 'linked-home') }));
  t.equal(linked.userHome, join(root, 'real-home'), 'the home by its real path');
  t.same(linked.emptied, [...SHARED_PLACES, join(root, 'real-home')]);

  for (const [runtimeDirectory, what] of [
    ['runtime', 'a relative runtime folder'],
    [join(root, 'missing'), 'a missing one'],
  ] as const) {
    t.same((await resolveSandboxView(options({ runtimeDirectory }))).emptied, SHARED_PLACES, what);
  }
  const rootHome = await resolveSandboxView(options({ userHome: '/' }));
  t.same(rootHome.emptied, SHARED_PLACES, 'a home that is / is not emptied: nothing would be left');
  const noHome = await resolveSandboxView(options({}));
  t.same(
    { userHome: noHome.userHome, readable: noHome.readable, credentialPaths: noHome.credentialPaths },
    { userHome: null, readable: [], credentialPaths: [] },
  );
  const missingHome = await resolveSandboxView(options({ userHome: join(root, 'gone') }));
  t.equal(missingHome.userHome, null, 'a home that does not exist is none');
});

t.test("the home's toolchain folders stay readable, by their real source", async (t) => {
  const root = apart(t);
  const home = join(root, 'ada');
  make(
    home,
    '.cargo/bin/cargo',
    '.rustup/',
    '.local/bin/tool',
    '.local/share/mise/',
    '.gitconfig',
    '.config/git/config',
    '.ssh/id_ed25519',
  );
  make(root, 'go-real/bin/');
  symlinkSync(join(root, 'go-real'), join(home, 'go'));
  symlinkSync(join(home, '.ssh'), join(home, '.deno'));
  symlinkSync(join(root, 'missing'), join(home, '.bun'));
  const view = await resolveSandboxView(options({ userHome: home }));
  t.same(view.readable, [
    { source: join(home, '.cargo'), path: join(home, '.cargo') },
    { source: join(home, '.rustup'), path: join(home, '.rustup') },
    { source: join(home, '.local/share/mise'), path: join(home, '.local/share/mise') },
    { source: join(home, '.local/bin'), path: join(home, '.local/bin') },
    { source: join(root, 'go-real'), path: join(home, 'go') },
    { source: join(home, '.gitconfig'), path: join(home, '.gitconfig') },
    { source: join(home, '.config/git/config'), path: join(home, '.config/git/config') },
  ]);
  t.same(view.skipped, [], 'a default that is missing or leads to a credential place is left out silently');
  t.ok(READABLE_HOME_PATHS.includes('.deno'), 'a symlink to .ssh under a readable name is not made readable');
  t.same(view.credentialPaths, homeCredentialPaths(home));
});

t.test('configured readable paths, and why some are not made readable', async (t) => {
  const root = apart(t);
  const home = join(root, 'ada');
  const daemonHome = join(root, 'magi');
  make(home, 'tools/bin/', 'projects/.env', '.ssh/', 'notes/');
  make(root, 'magi/state/', 'opt/');
  symlinkSync(daemonHome, join(home, 'to-daemon'));
  symlinkSync(join(home, '.ssh'), join(home, 'notes', 'keys'));
  const shared = mkdtempSync(join(tmpdir(), 'magi-view-test-'));
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  const view = await resolveSandboxView(
    options({
      userHome: home,
      daemonHome,
      readablePaths: [
        '~/tools',
        `${home}/tools/bin`,
        shared,
        join(root, 'opt'),
        'relative/tools',
        '~',
        home,
        root,
        '~/.ssh',
        '~/projects/.env',
        '~/notes/keys',
        '~/missing',
        daemonHome,
        join(daemonHome, 'state'),
        '~/to-daemon',
      ],
    }),
  );
  t.same(
    view.readable.filter((entry) => !READABLE_HOME_PATHS.some((path) => entry.path === join(home, path))),
    [
      { source: join(home, 'tools'), path: join(home, 'tools') },
      { source: join(home, 'tools/bin'), path: join(home, 'tools/bin') },
      { source: realpathSync(shared), path: shared },
    ],
    'inside an emptied place only: elsewhere the read-only root shows them already',
  );
  t.same(view.skipped, [
    { path: 'relative/tools', reason: 'relative' },
    { path: home, reason: 'whole_home' },
    { path: home, reason: 'whole_home' },
    { path: root, reason: 'daemon_home' },
    { path: join(home, '.ssh'), reason: 'credential_path' },
    { path: join(home, 'projects/.env'), reason: 'credential_path' },
    { path: join(home, 'notes/keys'), reason: 'credential_path' },
    { path: join(home, 'missing'), reason: 'missing' },
    { path: daemonHome, reason: 'daemon_home' },
    { path: join(daemonHome, 'state'), reason: 'daemon_home' },
    { path: join(home, 'to-daemon'), reason: 'daemon_home' },
  ]);

  const homeless = await resolveSandboxView(options({ readablePaths: ['~/tools', '~'] }));
  t.same(
    homeless.skipped,
    [
      { path: '~/tools', reason: 'relative' },
      { path: '~', reason: 'relative' },
    ],
    'without a home, ~ names nothing',
  );
});

t.test("a command's PATH: the daemon's entries it can see, in order, then the system's", async (t) => {
  const root = apart(t);
  const home = join(root, 'ada');
  const daemonHome = join(root, 'magi');
  make(home, '.cargo/bin/', 'bin/', '.local/bin/');
  make(root, 'magi/bin/', 'tools/bin/', 'go-real/bin/');
  symlinkSync(join(home, '.cargo', 'bin'), join(root, 'cargo-link'));
  symlinkSync(join(home, 'bin'), join(root, 'home-bin-link'));
  const hiddenShared = mkdtempSync(join(tmpdir(), 'magi-view-test-'));
  t.teardown(() => rmSync(hiddenShared, { recursive: true, force: true }));
  const view = await resolveSandboxView(
    options({
      userHome: home,
      daemonHome,
      searchPath: [
        join(home, '.cargo', 'bin'),
        join(home, 'bin'),
        '/usr/bin',
        'node_modules/.bin',
        '',
        '/nonexistent/bin',
        join(daemonHome, 'bin'),
        hiddenShared,
        join(home, '.cargo', 'bin'),
        join(root, 'tools', 'bin'),
        join(root, 'cargo-link'),
        join(root, 'home-bin-link'),
        join(home, '.local', 'bin'),
      ].join(':'),
    }),
  );
  t.equal(
    view.commandPath,
    [
      join(home, '.cargo', 'bin'),
      '/usr/bin',
      join(root, 'tools', 'bin'),
      join(root, 'cargo-link'),
      join(home, '.local', 'bin'),
      '/usr/local/sbin',
      '/usr/local/bin',
      '/usr/sbin',
      '/sbin',
      '/bin',
    ].join(':'),
  );
  t.equal((await resolveSandboxView(options({}))).commandPath, COMMAND_PATH, 'with nothing of its own');
  t.equal(COMMAND_PATH, '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
});

t.test("the socket's folder and the daemon's home, by their real paths", async (t) => {
  const root = apart(t);
  make(root, 'runtime/magi/', 'home/');
  symlinkSync(join(root, 'runtime'), join(root, 'runtime-link'));
  symlinkSync(join(root, 'home'), join(root, 'home-link'));
  const view = await resolveSandboxView(
    options({
      socketPath: join(root, 'runtime-link', 'magi', 'magid.sock'),
      daemonHome: join(root, 'home-link'),
    }),
  );
  t.same(view.socket, {
    directory: join(root, 'runtime', 'magi'),
    path: join(root, 'runtime', 'magi', 'magid.sock'),
  });
  t.equal(view.daemonHome, join(root, 'home'));
  const missing = await resolveSandboxView(
    options({ socketPath: join(root, 'gone', 'magid.sock'), daemonHome: join(root, 'not-yet') }),
  );
  t.equal(missing.socket, null, 'a socket whose folder is missing has nothing to cover');
  t.equal(missing.daemonHome, join(root, 'not-yet'), 'a home not made yet is kept as it was given');
  t.equal((await resolveSandboxView(options({}))).socket, null, 'stdio has no socket');
});

t.test('isInside is strict and works on whole names', async (t) => {
  t.ok(isInside('/a/b', '/a'));
  t.ok(isInside('/a/b/c', '/a/'));
  t.ok(isInside('/a', '/'));
  t.notOk(isInside('/a', '/a'), 'not the folder itself');
  t.notOk(isInside('/ab', '/a'), 'not a sibling sharing a prefix');
  t.notOk(isInside('/a', '/a/b'));
});
