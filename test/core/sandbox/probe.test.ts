import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import t from 'tap';
import { probeSandbox } from '../../../core/sandbox/command-sandbox.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import {
  bwrap,
  killOnTeardown,
  processesLeft,
  processStarted,
  sandboxUnavailable,
} from '../../helpers/sandbox-machine.js';

async function scratch(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'magi-probe-test-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** A fake `bwrap` in `directory` running `body` as a shell script, executable unless told otherwise. */
async function fakeBwrap(directory: string, body: string, mode = 0o755): Promise<string> {
  const path = join(directory, 'bwrap');
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, mode);
  return path;
}

t.test(
  'a machine that can run the sandbox is found available, with the bwrap it found',
  { skip: sandboxUnavailable ?? false },
  async (t) => {
    const probe = await probeSandbox({ searchPath: process.env.PATH ?? '', clock: fakeClock() });
    t.same(probe, { available: true, bwrap });
    t.match(bwrap, /\/bwrap$/);
  },
);

t.test('without bwrap on the search path the answer is not_installed', async (t) => {
  const empty = await scratch(t);
  const notExecutable = await scratch(t);
  await fakeBwrap(notExecutable, 'exit 0', 0o644);
  const relativeOnly = await scratch(t);
  await fakeBwrap(relativeOnly, 'exit 1');
  for (const [searchPath, what] of [
    ['', 'an empty search path'],
    [empty, 'a directory without it'],
    [`${empty}${delimiter}/nonexistent/bin`, 'directories without it'],
    [notExecutable, 'a bwrap that is not executable'],
    [relative(process.cwd(), relativeOnly), 'a relative entry, which would follow the working directory'],
  ] as const) {
    t.same(
      await probeSandbox({ searchPath, clock: fakeClock() }),
      { available: false, reason: 'not_installed' },
      what,
    );
  }
});

t.test(
  'a bwrap that cannot start a sandbox is cannot_start, and it was asked with the real flags',
  async (t) => {
    const directory = await scratch(t);
    const calls = join(directory, 'calls');
    await fakeBwrap(
      directory,
      `printf '%s\\n' "$@" >> '${calls}'; echo 'bwrap: No permissions to create a new namespace' >&2; exit 1`,
    );
    const probe = await probeSandbox({ searchPath: directory, clock: fakeClock() });
    t.same(probe, { available: false, reason: 'cannot_start' });
    const args = (await readFile(calls, 'utf8')).split('\n');
    t.same(args.slice(0, 3), ['--ro-bind', '/', '/'], 'the read-only root');
    for (const flag of [
      '--unshare-net',
      '--unshare-pid',
      '--die-with-parent',
      '--new-session',
      '--clearenv',
    ]) {
      t.ok(args.includes(flag), flag);
    }
    t.equal(args.filter((arg) => arg === '/bin/sh').length, 1, 'asked once, nothing tried after it failed');
  },
);

t.test('a bwrap that runs the command without sandboxing it is cannot_start', async (t) => {
  // Honours only --chdir and runs the command as it is: the hidden file would be read.
  const directory = await scratch(t);
  await fakeBwrap(
    directory,
    'while [ $# -gt 0 ]; do case $1 in --chdir) cd "$2"; shift 2;; --) shift; break;; *) shift;; esac; done; exec "$@"',
  );
  t.same(await probeSandbox({ searchPath: directory, clock: fakeClock() }), {
    available: false,
    reason: 'cannot_start',
  });
});

t.test('a bwrap that never answers is cannot_start once the probe times out on the clock', async (t) => {
  const directory = await scratch(t);
  await fakeBwrap(directory, 'exec sleep 98768');
  killOnTeardown(t, 'sleep 98768');
  const clock = fakeClock();
  let settled = false;
  const probing = probeSandbox({ searchPath: directory, clock }).finally(() => {
    settled = true;
  });
  await processStarted('sleep 98768');
  clock.advance(9_999);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.notOk(settled, 'still waiting before the probe limit');
  clock.advance(1);
  t.same(await probing, { available: false, reason: 'cannot_start' });
  t.same(await processesLeft('sleep 98768'), [], 'the stuck probe was killed');
});
