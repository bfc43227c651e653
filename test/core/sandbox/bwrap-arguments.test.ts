import t from 'tap';
import {
  ARGUMENTS_FD,
  bwrapArguments,
  encodeOptions,
  SECCOMP_FD,
  STATUS_FD,
} from '../../../core/sandbox/bwrap-arguments.js';
import { COMMAND_BOUNDS } from '../../../core/sandbox/command-limits.js';
import { COMMAND_PATH, type SandboxView } from '../../../core/sandbox/sandbox-view.js';
import type { SandboxPath, WorkspaceScan } from '../../../core/sandbox/workspace-scan.js';

const EMPTY_FILE = '/home/ada/.magi/run/sandbox/covers-x/empty-file';
const EMPTY_DIRECTORY = '/home/ada/.magi/run/sandbox/covers-x/empty-directory';
const SIZE = String(COMMAND_BOUNDS.tmpfs_bytes);
const SHARED = ['/tmp', '/var/tmp', '/run', '/dev/shm'];

/** The view of a daemon whose user is ada, with two readable folders of her home. */
function view(overrides: Partial<SandboxView> = {}): SandboxView {
  return {
    daemonHome: '/home/ada/.magi',
    socket: { directory: '/run/user/1000/magi', path: '/run/user/1000/magi/magid.sock' },
    userHome: '/home/ada',
    emptied: [...SHARED, '/home/ada'],
    readable: [
      { source: '/home/ada/.cargo', path: '/home/ada/.cargo' },
      { source: '/opt/go', path: '/home/ada/go' },
    ],
    credentialPaths: ['/home/ada/.ssh', '/home/ada/.cargo/credentials'],
    commandPath: `/home/ada/.cargo/bin:${COMMAND_PATH}`,
    skipped: [],
    system: { masked: [], secrets: [] },
    ...overrides,
  };
}

type Entry = { path: string | SandboxPath; kind: 'directory' | 'file' };

/** A scan of `workspace` holding descriptors 10 (the root) and up, in the order given. */
function scan(
  workspace: string,
  parts: { pins?: string[]; readOnly?: string[]; covers?: Entry[]; outside?: Entry[] } = {},
): WorkspaceScan {
  let fd = 10;
  const held = (path: string) => ({ fd: fd++, path: Buffer.from(path) });
  return {
    root: held(workspace),
    pins: (parts.pins ?? []).map(held),
    readOnly: (parts.readOnly ?? []).map(held),
    covers: (parts.covers ?? []).map((entry) => ({ path: Buffer.from(entry.path), kind: entry.kind })),
    outside: (parts.outside ?? []).map((entry) => ({
      path: Buffer.from(entry.path).toString(),
      kind: entry.kind,
    })),
  };
}

function options(mountView: SandboxView, mountScan: WorkspaceScan, others: string[] = []): string[] {
  const { options: list } = bwrapArguments({
    view: mountView,
    scan: mountScan,
    emptyFile: EMPTY_FILE,
    emptyDirectory: EMPTY_DIRECTORY,
    otherWorkspaces: others,
  });
  return list.map((option) => (typeof option === 'string' ? option : Buffer.from(option).toString()));
}

const PROC = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'].flatMap((path) => [
  '--ro-bind-try',
  path,
  path,
]);
const START = ['--ro-bind', '/', '/', '--proc', '/proc', ...PROC, '--dev', '/dev'];
const empty = (place: string) => ['--size', SIZE, '--tmpfs', place];
const HOME_READABLE = [
  '--ro-bind',
  '/home/ada/.cargo',
  '/home/ada/.cargo',
  '--ro-bind',
  '/opt/go',
  '/home/ada/go',
];
const file = (path: string) => ['--ro-bind', EMPTY_FILE, path];
const folder = (path: string) => ['--ro-bind', EMPTY_DIRECTORY, path];

function end(path: string, home: string, workspace: string): string[] {
  return [
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--seccomp',
    '4',
    '--json-status-fd',
    '5',
    '--clearenv',
    '--setenv',
    'PATH',
    path,
    '--setenv',
    'HOME',
    home,
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'TERM',
    'dumb',
    '--chdir',
    workspace,
  ];
}

t.test('the descriptors bwrap reads and writes, before the held ones', async (t) => {
  t.same([ARGUMENTS_FD, SECCOMP_FD, STATUS_FD], [3, 4, 5]);
});

t.test(
  'a workspace under an emptied place: the places first, then the workspace and its marks',
  async (t) => {
    const invocation = bwrapArguments({
      view: view(),
      scan: scan('/tmp/project', {
        pins: ['/tmp/project/src'],
        readOnly: ['/tmp/project/.git'],
        covers: [
          { path: '/tmp/project/src/.env', kind: 'file' },
          { path: '/tmp/project/.git/config', kind: 'file' },
        ],
        outside: [
          { path: '/home/ada/.magi', kind: 'directory' },
          { path: '/home/ada/.cargo/credentials', kind: 'file' },
          { path: '/run/user/1000/magi', kind: 'directory' },
        ],
      }),
      emptyFile: EMPTY_FILE,
      emptyDirectory: EMPTY_DIRECTORY,
      otherWorkspaces: [],
    });
    t.same(invocation.heldFds, [10, 11, 12], 'passed at 6, 7 and 8, in the order the options name them');
    t.same(
      invocation.options.map((option) =>
        typeof option === 'string' ? option : Buffer.from(option).toString(),
      ),
      [
        ...START,
        ...SHARED.flatMap(empty),
        ...empty('/home/ada'),
        ...HOME_READABLE,
        ...['--bind-fd', '6', '/tmp/project'],
        ...['--bind-fd', '7', '/tmp/project/src'],
        ...['--ro-bind-fd', '8', '/tmp/project/.git'],
        ...file('/tmp/project/src/.env'),
        ...file('/tmp/project/.git/config'),
        // The daemon's home and the socket's folder are inside emptied places: nothing to cover there.
        ...file('/home/ada/.cargo/credentials'),
        ...end(`/home/ada/.cargo/bin:${COMMAND_PATH}`, '/home/ada', '/tmp/project'),
      ],
    );
  },
);

t.test('a workspace holding an emptied place: that place is emptied after the marks inside it', async (t) => {
  const found = options(
    view(),
    scan('/home', {
      pins: ['/home/ada', '/home/bob', '/home/ada/project'],
      readOnly: ['/home/ada/project/.git'],
      covers: [
        { path: '/home/ada/project/.env', kind: 'file' },
        { path: '/home/ada/.magi', kind: 'directory' },
        { path: '/home/bob/.ssh', kind: 'directory' },
      ],
      outside: [
        { path: '/home/ada/.magi', kind: 'directory' },
        { path: '/home/ada/.cargo/credentials', kind: 'file' },
      ],
    }),
  );
  t.same(found, [
    ...START,
    ...SHARED.flatMap(empty),
    ...['--bind-fd', '6', '/home'],
    ...['--bind-fd', '7', '/home/ada'],
    ...['--bind-fd', '8', '/home/bob'],
    ...['--bind-fd', '9', '/home/ada/project'],
    ...['--ro-bind-fd', '10', '/home/ada/project/.git'],
    // After the pins and the .git folder inside it, which would show the host's view of it again.
    ...empty('/home/ada'),
    ...HOME_READABLE,
    // What lies in the emptied home is gone already: covering it would make an empty entry of its name.
    ...folder('/home/bob/.ssh'),
    ...file('/home/ada/.cargo/credentials'),
    ...end(`/home/ada/.cargo/bin:${COMMAND_PATH}`, '/home/ada', '/home'),
  ]);
});

t.test(
  "a workspace that is the user's home: the home is not emptied, its credentials are covered",
  async (t) => {
    const found = options(
      view(),
      scan('/home/ada', {
        pins: ['/home/ada/.cache', '/home/ada/.cache/huggingface'],
        covers: [
          { path: '/home/ada/.ssh', kind: 'directory' },
          { path: '/home/ada/.ssh/id_rsa', kind: 'file' },
          { path: '/home/ada/.cache/huggingface/token', kind: 'file' },
          { path: '/home/ada/.magi', kind: 'directory' },
        ],
        outside: [
          { path: '/home/ada/.magi', kind: 'directory' },
          { path: '/home/ada/.cargo/credentials', kind: 'file' },
        ],
      }),
    );
    t.same(found, [
      ...START,
      ...SHARED.flatMap(empty),
      ...['--bind-fd', '6', '/home/ada'],
      ...['--bind-fd', '7', '/home/ada/.cache'],
      ...['--bind-fd', '8', '/home/ada/.cache/huggingface'],
      ...folder('/home/ada/.ssh'),
      ...file('/home/ada/.cache/huggingface/token'),
      // Found by the walk and named as an outside path too: covered once.
      ...folder('/home/ada/.magi'),
      ...file('/home/ada/.cargo/credentials'),
      ...end(`/home/ada/.cargo/bin:${COMMAND_PATH}`, '/home/ada', '/home/ada'),
    ]);
  },
);

t.test("a workspace holding the daemon's home, without a user's home", async (t) => {
  const found = options(
    view({
      daemonHome: '/srv/work/magi',
      socket: null,
      userHome: null,
      emptied: SHARED,
      readable: [],
      credentialPaths: [],
      commandPath: COMMAND_PATH,
    }),
    scan('/srv/work', {
      pins: ['/srv/work/state'],
      covers: [{ path: '/srv/work/state/magi', kind: 'directory' }],
      outside: [{ path: '/srv/work/state/magi', kind: 'directory' }],
    }),
  );
  t.same(found, [
    ...START,
    ...SHARED.flatMap(empty),
    ...['--bind-fd', '6', '/srv/work'],
    ...['--bind-fd', '7', '/srv/work/state'],
    ...folder('/srv/work/state/magi'),
    ...end(COMMAND_PATH, '/srv/work', '/srv/work'),
  ]);
});

t.test('a cover inside another is left out, a sibling sharing its prefix is not', async (t) => {
  const found = options(
    view({ emptied: SHARED, readable: [] }),
    scan('/srv/w', {
      covers: [
        { path: '/srv/w/a/b/.env', kind: 'file' },
        { path: '/srv/w/a', kind: 'directory' },
        { path: '/srv/w/ab/.env', kind: 'file' },
        { path: '/srv/w/a/c', kind: 'directory' },
        { path: '/srv/w/.env', kind: 'file' },
      ],
      outside: [
        { path: '/srv/w/a/d', kind: 'file' },
        { path: '/etc/magi-secret', kind: 'file' },
      ],
    }),
  );
  const covered = found.filter(
    (_, index) => index > 0 && [EMPTY_FILE, EMPTY_DIRECTORY].includes(found[index - 1]!),
  );
  t.same(covered, ['/srv/w/a', '/srv/w/ab/.env', '/srv/w/.env', '/etc/magi-secret']);
});

t.test('a readable folder inside an emptied place outside the home is bound back into it', async (t) => {
  const found = options(
    view({ readable: [{ source: '/tmp/shared-tools', path: '/tmp/shared-tools' }] }),
    scan('/srv/w', {
      outside: [
        { path: '/tmp/shared-tools/.npmrc', kind: 'file' },
        { path: '/tmp/other', kind: 'file' },
      ],
    }),
  );
  t.same(found.slice(START.length, START.length + 7), [
    ...empty('/tmp'),
    '--ro-bind',
    '/tmp/shared-tools',
    '/tmp/shared-tools',
  ]);
  t.ok(
    found.join('\n').includes(file('/tmp/shared-tools/.npmrc').join('\n')),
    'a credential file inside it is covered',
  );
  t.notOk(found.includes('/tmp/other'), 'one elsewhere in /tmp is gone already');
});

t.test('paths stay the bytes the filesystem names them, and the options end with NULs', async (t) => {
  const strange = Buffer.concat([Buffer.from('/srv/w/'), Buffer.from([0xff, 0xfe]), Buffer.from('/.env')]);
  const { options: list } = bwrapArguments({
    view: view({ emptied: SHARED, readable: [] }),
    scan: scan('/srv/w', { pins: [], covers: [{ path: strange, kind: 'file' }] }),
    emptyFile: EMPTY_FILE,
    emptyDirectory: EMPTY_DIRECTORY,
    otherWorkspaces: [],
  });
  const cover = list.find((option) => typeof option !== 'string' && Buffer.from(option).includes(0xff));
  t.same(Buffer.from(cover!).toString('hex'), strange.toString('hex'));
  const encoded = encodeOptions(list);
  t.ok(encoded.includes(Buffer.concat([strange, Buffer.from([0])])), 'written as they are');
  t.equal(encoded.at(-1), 0, 'every option ends with a NUL');
  t.equal(encoded.filter((byte) => byte === 0).length, list.length, 'one NUL each');

  t.same(
    encodeOptions(['--tmpfs', Buffer.from([0x61, 0xff]), '', 'é']),
    Buffer.from([...Buffer.from('--tmpfs'), 0, 0x61, 0xff, 0, 0, 0xc3, 0xa9, 0]),
    'an empty option is a lone NUL; text is UTF-8',
  );
  t.same(encodeOptions([]), Buffer.alloc(0));
});

t.test(
  'the kernel’s settings are read-only and its sensitive files masked, right after the fresh /proc',
  async (t) => {
    const found = options(
      view({
        system: {
          masked: [
            { path: '/proc/keys', kind: 'file' },
            { path: '/proc/acpi', kind: 'directory' },
            { path: '/sys/firmware', kind: 'directory' },
          ],
          secrets: [
            { path: '/etc/shadow', kind: 'file' },
            { path: '/etc/ssl/private', kind: 'directory' },
            { path: '/tmp/hidden-already', kind: 'file' },
          ],
        },
      }),
      scan('/srv/w'),
    );
    t.same(found.slice(0, 5), ['--ro-bind', '/', '/', '--proc', '/proc']);
    t.same(found.slice(5, 5 + PROC.length), PROC, 'bound onto themselves, read-only, where they exist');
    t.same(
      found.slice(5 + PROC.length, 5 + PROC.length + 9),
      [...file('/proc/keys'), ...folder('/proc/acpi'), ...folder('/sys/firmware')],
      'the masked ones next',
    );
    const text = found.join('\n');
    const workspaceBind = found.indexOf('/srv/w');
    t.ok(text.includes(file('/etc/shadow').join('\n')), 'the system’s secrets are covered');
    t.ok(found.indexOf('/etc/shadow') > workspaceBind, 'after the workspace, which cannot uncover them');
    t.ok(text.includes(folder('/etc/ssl/private').join('\n')));
    t.notOk(found.includes('/tmp/hidden-already'), 'not where an emptied place hides them already');
    t.ok(found.includes('--unshare-uts') && found.includes('--unshare-cgroup-try'));
  },
);

t.test('the other sessions’ workspaces are emptied, unless they lie in this one', async (t) => {
  const found = options(view(), scan('/srv/outer/inner'), [
    '/srv/apart',
    '/srv/outer',
    '/srv/outer/inner',
    '/srv/outer/inner/nested',
    '/srv/apart/deeper',
    '/tmp/elsewhere',
    '/home/ada/projects/p',
    '/home/ada/go/src/q',
    '/opt/go/src/r',
    '/srv/apart',
  ]);
  const emptiedOthers = found.filter(
    (option, index) => found[index - 1] === '--tmpfs' && !SHARED.includes(option) && option !== '/home/ada',
  );
  t.same(
    emptiedOthers,
    ['/srv/apart', '/srv/outer', '/home/ada/go/src/q', '/opt/go/src/r', '/home/ada/go/src/r'],
    'apart, holding this one, or shown again by a readable folder (under its source’s path too); once, outermost only',
  );
  const bind = found.indexOf('/srv/outer/inner');
  t.ok(
    emptiedOthers.every((place) => found.indexOf(place) < bind),
    'before the workspace’s bind, which shows it again inside the one that holds it',
  );
  t.ok(
    found.lastIndexOf('/home/ada/go') < found.indexOf('/home/ada/go/src/q'),
    'after the readable folder that showed it',
  );
});
