import { spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { WireClient } from '../../client/wire-client.js';
import { magidArguments } from '../helpers/magid-command.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import { childEnv, logged, MagidProcess, PROJECT_ROOT, type StdioDaemon } from './spawn-daemon.js';

/** The unprivileged user a root test starts daemons as. */
export const NOBODY = { uid: 65534, gid: 65534 } as const;

interface Tap {
  teardown(fn: () => unknown): void;
}

/** Why this machine cannot start a daemon as another user, or null when it can. */
export function unprivilegedUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'starting a daemon as another user needs root';
  for (const tool of ['/usr/bin/setpriv', '/usr/bin/unshare']) {
    try {
      accessSync(tool, constants.X_OK);
    } catch {
      return `${tool} (util-linux) is missing`;
    }
  }
  return null;
}

/** Gives `path` and everything beneath it to `owner`, so that a daemon of that user owns its home. */
export function chownTree(path: string, owner: { uid: number; gid: number } = NOBODY): void {
  chownSync(path, owner.uid, owner.gid);
  if (!statSync(path).isDirectory()) return;
  for (const name of readdirSync(path)) chownTree(join(path, name), owner);
}

/** Whether every folder from `/` down to `path` lets others through, and `path` lets them read. */
function readableByOthers(path: string): boolean {
  for (let folder = path; ; folder = dirname(folder)) {
    const { mode } = statSync(folder);
    if ((mode & 0o001) === 0 || (folder === path && (mode & 0o004) === 0)) return false;
    if (folder === '/') return true;
  }
}

/**
 * `magid stdio --home <home> ...args` run as NOBODY, with a wire client on its stdin and stdout: stdio needs
 * no socket, so the test (root) talks to it although a daemon serves its own user only. The checkout must
 * be readable by that user: when it lies under a private folder (a clone under /root), it is bound, in a
 * mount namespace of the daemon's own, onto a fresh folder that is not.
 */
export async function startUnprivilegedStdio(
  t: Tap,
  options: { home: string; args?: readonly string[]; env?: NodeJS.ProcessEnv },
): Promise<StdioDaemon> {
  const readable = readableByOthers(PROJECT_ROOT);
  const checkout = readable ? PROJECT_ROOT : mkdtempSync('/var/tmp/magi-checkout-');
  if (!readable) {
    chmodSync(checkout, 0o755);
    t.teardown(() => rmSync(checkout, { recursive: true, force: true }));
  }
  const setpriv = [
    '/usr/bin/setpriv',
    `--reuid=${NOBODY.uid}`,
    `--regid=${NOBODY.gid}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--',
    '/usr/bin/env',
    ...WITHOUT_TEST_HOOKS,
    ...magidArguments(checkout),
    'stdio',
    '--home',
    options.home,
    ...(options.args ?? []),
  ];
  let command: string[] = setpriv;
  let cwd = PROJECT_ROOT;
  if (!readable) {
    command = [
      '/usr/bin/unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"',
      'sh',
      PROJECT_ROOT,
      checkout,
      ...setpriv,
    ];
    cwd = '/';
  }
  const child = spawn(command[0]!, command.slice(1), {
    cwd,
    env: { ...childEnv(), ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const magid = new MagidProcess(child);
  t.teardown(async () => {
    if (!magid.running) return;
    child.kill('SIGKILL');
    await magid.exited;
  });
  const { stdin, stdout } = child;
  stdin!.on('error', () => {});
  const client = new WireClient({ write: (line) => stdin!.write(line), end: () => stdin!.end() });
  stdout!.on('data', (text: string) => client.receive(text));
  stdout!.on('close', () => client.closedByPeer());
  await logged(magid, 'serving stdio');
  return { magid, client };
}
