import t from 'tap';
import { bwrapArguments, COMMAND_PATH, needsEmptyFile } from '../../../core/sandbox/bwrap-arguments.js';
import type { SandboxLayout } from '../../../core/sandbox/sandbox-layout.js';

const layout: SandboxLayout = {
  workspace: '/home/ada/project',
  hiddenAround: [
    { path: '/home/ada/.magi', kind: 'directory' },
    { path: '/home/ada/.netrc', kind: 'file' },
  ],
  hiddenWithin: [{ path: '/home/ada/project/.ssh', kind: 'directory' }],
};

/** The index of `sequence` as consecutive arguments of `args`, or -1. */
function indexOf(args: string[], ...sequence: string[]): number {
  return args.findIndex((_, start) => sequence.every((value, offset) => args[start + offset] === value));
}

t.test('the full argument list for one command', async (t) => {
  t.same(bwrapArguments(layout, '/tmp/magi-sandbox-x/empty', 'ls -la'), [
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    '--tmpfs',
    '/home/ada/.magi',
    '--ro-bind',
    '/tmp/magi-sandbox-x/empty',
    '/home/ada/.netrc',
    '--bind',
    '/home/ada/project',
    '/home/ada/project',
    '--tmpfs',
    '/home/ada/project/.ssh',
    '--unshare-net',
    '--unshare-pid',
    '--unshare-ipc',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--clearenv',
    '--setenv',
    'PATH',
    COMMAND_PATH,
    '--setenv',
    'HOME',
    '/home/ada/project',
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'TERM',
    'dumb',
    '--chdir',
    '/home/ada/project',
    '--',
    '/bin/sh',
    '-c',
    'ls -la',
  ]);
  t.equal(COMMAND_PATH, '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
});

t.test('mounts come in the order that keeps the workspace visible and the hidden paths hidden', async (t) => {
  const args = bwrapArguments(layout, '/e', 'true');
  const root = indexOf(args, '--ro-bind', '/', '/');
  const tmp = indexOf(args, '--tmpfs', '/tmp');
  const around = indexOf(args, '--tmpfs', '/home/ada/.magi');
  const workspace = indexOf(args, '--bind', '/home/ada/project', '/home/ada/project');
  const within = indexOf(args, '--tmpfs', '/home/ada/project/.ssh');
  t.equal(root, 0, 'the read-only root first, so every later mount lands on it');
  t.ok(tmp < workspace, 'the fresh /tmp before the workspace, which may lie under /tmp');
  t.ok(around < workspace, 'a hidden ancestor before the workspace, which stays visible');
  t.ok(within > workspace, 'a hidden path inside the workspace after it, so the bind does not reveal it');
});

t.test('the command is the one argument after /bin/sh -c, whatever it looks like', async (t) => {
  const command = '--bind / / -- "$HOME"; rm -rf ~';
  const args = bwrapArguments({ workspace: '/w', hiddenAround: [], hiddenWithin: [] }, null, command);
  t.same(args.slice(-4), ['--', '/bin/sh', '-c', command]);
  t.equal(indexOf(args, '--bind', '/', '/'), -1, 'never read as options');
});

t.test('a hidden file needs the empty file', async (t) => {
  t.equal(needsEmptyFile(layout), true);
  t.equal(needsEmptyFile({ ...layout, hiddenAround: [layout.hiddenAround[0]!] }), false);
  t.throws(() => bwrapArguments(layout, null, 'true'));
});
