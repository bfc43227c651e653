import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { nativeAddon } from '../../../core/endpoint/native.js';
import { probeSandbox, type SandboxProbe } from '../../../core/sandbox/probe.js';
import { commandSeccompProgram } from '../../../core/sandbox/seccomp-filter.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import {
  bwrap,
  killOnTeardown,
  processesLeft,
  processStarted,
  sandboxUnavailable,
} from '../../helpers/sandbox-machine.js';

async function scratch(t: Test): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'magi-probe-test-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** A fake `bwrap` in `directory` running `body` as a shell script, executable unless told otherwise. */
async function fakeBwrap(directory: string, body: string, mode = 0o755): Promise<string> {
  const path = join(directory, 'bwrap');
  // The gate starts bwrap with an empty environment.
  await writeFile(path, `#!/bin/sh\nPATH=/usr/bin:/bin\n${body}\n`);
  await chmod(path, mode);
  return path;
}

function probe(searchPath: string, overrides: { arch?: string; clock?: ReturnType<typeof fakeClock> } = {}) {
  return probeSandbox({
    searchPath,
    clock: overrides.clock ?? fakeClock(),
    arch: overrides.arch ?? process.arch,
    limitProcess: nativeAddon().limitProcess,
  });
}

const CANNOT_START: SandboxProbe = { available: false, reason: 'cannot_start' };

t.test(
  'a machine that can run the sandbox is found available, with the bwrap it found',
  { skip: sandboxUnavailable ?? false },
  async (t) => {
    t.same(await probe(process.env.PATH ?? ''), { available: true, bwrap, architecture: 'x64' });
    t.match(bwrap, /\/bwrap$/);
  },
);

t.test('an architecture without a seccomp program is unsupported, before bwrap is looked for', async (t) => {
  const directory = await scratch(t);
  await fakeBwrap(directory, `touch '${join(directory, 'ran')}'; exit 0`);
  for (const arch of ['ia32', 'arm', 'riscv64', 's390x']) {
    t.same(await probe(directory, { arch }), { available: false, reason: 'unsupported_architecture' }, arch);
  }
  await t.rejects(stat(join(directory, 'ran')), { code: 'ENOENT' }, 'bwrap was never run');
});

t.test('without bwrap on the search path the answer is not_installed', async (t) => {
  const empty = await scratch(t);
  const notExecutable = await scratch(t);
  await fakeBwrap(notExecutable, 'exit 0', 0o644);
  const relativeOnly = await scratch(t);
  await fakeBwrap(relativeOnly, 'exit 1');
  const folder = await scratch(t);
  await mkdir(join(folder, 'bwrap'), { mode: 0o755 });
  for (const [searchPath, what] of [
    ['', 'an empty search path'],
    [empty, 'a directory without it'],
    [`${empty}${delimiter}/nonexistent/bin${delimiter}`, 'directories without it'],
    [notExecutable, 'a bwrap that is not executable'],
    [folder, 'a folder named bwrap'],
    [relative(process.cwd(), relativeOnly), 'a relative entry, which would follow the working directory'],
  ] as const) {
    t.same(await probe(searchPath), { available: false, reason: 'not_installed' }, what);
  }
});

t.test(
  'a bwrap that cannot start a sandbox is cannot_start, and it was asked with the real flags',
  async (t) => {
    const directory = await scratch(t);
    const record = (name: string) => join(directory, name);
    await fakeBwrap(
      directory,
      [
        `printf '%s\\n' "$@" >> '${record('arguments')}'`,
        `tr '\\0' '\\n' <&3 > '${record('options')}'`,
        `cat <&4 > '${record('seccomp')}'`,
        `{ ulimit -c; ulimit -f; } > '${record('limits')}'`,
        "echo 'bwrap: No permissions to create a new namespace' >&2",
        'exit 1',
      ].join('\n'),
    );
    t.same(await probe(directory), CANNOT_START);
    const [probeArguments, options, seccomp, limits] = await Promise.all(
      ['arguments', 'options', 'seccomp', 'limits'].map((name) => readFile(record(name))),
    );
    t.same(
      probeArguments!.toString().split('\n'),
      ['--args', '3', '--', '/bin/sh', '-c', 'cat .env && ls -A .ssh && echo ok', ''],
      'asked once, its options on descriptor 3, nothing tried after it failed',
    );
    const list = options!.toString().split('\n');
    t.same(list.slice(0, 3), ['--ro-bind', '/', '/'], 'the read-only root first');
    for (const flag of [
      '--unshare-net',
      '--unshare-pid',
      '--unshare-ipc',
      '--die-with-parent',
      '--new-session',
      '--clearenv',
    ]) {
      t.ok(list.includes(flag), flag);
    }
    const after = (flag: string) => list[list.indexOf(flag) + 1];
    t.same([after('--cap-drop'), after('--seccomp'), after('--json-status-fd')], ['ALL', '4', '5']);
    t.ok(
      list.some(
        (option, index) => option.endsWith('/workspace/.env') && list[index - 1]!.endsWith('/empty-file'),
      ),
      'the covered file of the throwaway workspace',
    );
    t.ok(
      list.some(
        (option, index) =>
          option.endsWith('/workspace/.ssh') && list[index - 1]!.endsWith('/empty-directory'),
      ),
      'and its covered folder',
    );
    t.same(seccomp, commandSeccompProgram('x64'), 'the seccomp program on descriptor 4');
    t.equal(limits!.toString(), `0\n${2 ** 30 / 512}\n`, 'started by the gate, with its rlimits set');
  },
);

t.test('a bwrap that runs the command without sandboxing it is cannot_start', async (t) => {
  // Reports the command as bwrap would and honours --chdir, but covers nothing: the covered file is read.
  const directory = await scratch(t);
  await fakeBwrap(
    directory,
    [
      `workspace=$(tr '\\0' '\\n' <&3 | sed -n '/^--chdir$/{n;p;}')`,
      'cd "$workspace"',
      'echo \'{ "child-pid": 2 }\' >&5',
      'shift 2; shift',
      `"$@" > '${join(directory, 'output')}'; code=$?`,
      'echo "{ \\"exit-code\\": $code }" >&5',
      'exit $code',
    ].join('\n'),
  );
  t.same(await probe(directory), CANNOT_START);
  t.equal(
    await readFile(join(directory, 'output'), 'utf8'),
    'visible\nid_ed25519\nok\n',
    'the command ran to its end: what failed it is that the covered file and folder were not covered',
  );
});

t.test('a bwrap that never answers is cannot_start once the probe times out on the clock', async (t) => {
  const directory = await scratch(t);
  await fakeBwrap(directory, 'exec sleep 98768');
  killOnTeardown(t, 'sleep 98768');
  const clock = fakeClock();
  let settled = false;
  const probing = probe(directory, { clock }).finally(() => {
    settled = true;
  });
  await processStarted('sleep 98768');
  clock.advance(9_999);
  await sleep(50);
  t.notOk(settled, 'still waiting before the probe limit');
  clock.advance(1);
  t.same(await probing, CANNOT_START);
  t.same(await processesLeft('sleep 98768'), [], 'the stuck probe was killed');
});
