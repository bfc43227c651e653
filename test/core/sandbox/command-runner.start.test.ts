import { existsSync } from 'node:fs';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Clock } from '../../../core/clock.js';
import { ownFolder } from '../../../core/confinement/confined-workspace.js';
import { nativeAddon } from '../../../core/endpoint/native.js';
import {
  COMMAND_BOUNDS,
  type CommandSandbox,
  type LimitProcess,
} from '../../../core/sandbox/command-sandbox.js';
import {
  type BoundsEnforcement,
  type CommandGroup,
  type ResourceControl,
  resourceControl,
} from '../../../core/sandbox/resource-control.js';
import {
  killOnTeardown,
  neverAborted,
  processesLeft,
  processesWith,
  processStarted,
  rootDirectory,
  sandboxUnavailable,
  testSandbox,
} from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

function run(commands: CommandSandbox, workspace: string, command: string) {
  return commands.run({
    command,
    workspace: ownFolder(workspace),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
}

/** The limits a process inside reads in /proc/self/limits, by name, soft and hard. */
function limitsOf(text: string): Map<string, string> {
  const limits = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)/.exec(line);
    if (match) limits.set(match[1]!, `${match[2]} ${match[3]}`);
  }
  return limits;
}

/** Real time whose timers keep this process alive while close waits for a group to be free. */
const realTime: Clock = {
  now: () => performance.now(),
  wallNow: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(handle) };
  },
};

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

t.test('a sandbox that could not start rejects, and never reports an outcome', async (t) => {
  const root = await rootDirectory(t);
  // A bwrap that does as each command's text says: the command is the last argument the gate passes it.
  const fake = join(root, 'bwrap');
  await writeFile(
    fake,
    `#!/bin/sh
PATH=/usr/bin:/bin
for last; do :; done
case "$last" in
  status-without-exit) echo '{ "child-pid": 12 }' >&5; echo 'partial output'; exit 1 ;;
  nothing-exit-1) echo 'bwrap: Can not mount tmpfs' >&2; exit 1 ;;
  nothing-exit-0) exit 0 ;;
  command-exit-1) echo '{ "child-pid": 12 }' >&5; echo 'ran'; echo '{ "exit-code": 1 }' >&5; exit 1 ;;
  command-exit-0) echo '{ "child-pid": 12 }' >&5; echo 'ran'; echo '{ "exit-code": 0 }' >&5; exit 0 ;;
  killed-after-start) echo '{ "child-pid": 12 }' >&5; kill -KILL $$ ;;
esac
`,
  );
  await chmod(fake, 0o755);
  const commands = await testSandbox(t, { bwrap: fake });
  const workspace = await rootDirectory(t);
  for (const [command, what] of [
    ['status-without-exit', 'its child was made, but no exit code came: the command never ran'],
    ['nothing-exit-1', 'bwrap failed before it made anything'],
    ['nothing-exit-0', 'and even with 0, nothing said a child was made'],
  ] as const) {
    await t.rejects(run(commands, workspace, command), { name: 'SandboxStartFailed' }, what);
    t.equal(commands.running, 0, `${what}: the slot is free again`);
  }
  t.match(
    await run(commands, workspace, 'command-exit-1'),
    { exitCode: 1, output: 'ran\n', timedOut: false, cancelled: false },
    'an exit code of 1 that bwrap reported is the command’s own',
  );
  t.match(await run(commands, workspace, 'command-exit-0'), { exitCode: 0, output: 'ran\n' });
  t.match(
    await run(commands, workspace, 'killed-after-start'),
    { exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: false },
    'a sandbox killed from outside once it started (by the kernel, out of memory) is an outcome',
  );
});

interface Gate {
  enforcedBy: BoundsEnforcement;
  /** What the next group does: hold its join or its making until released, fail its join, or be refused. */
  next: 'hold' | 'hold_group' | 'fail_join' | 'refuse' | 'plain';
  release: () => void;
  joined: number[];
  removed: number;
  events: string[];
}

/** A resource control that makes no cgroup: it records, and does what the test says. */
function gatedControl(gate: Gate): ResourceControl {
  return {
    get enforcedBy() {
      return gate.enforcedBy;
    },
    group: async () => {
      if (gate.next === 'refuse') throw new Error('no group');
      const mode = gate.next;
      if (mode === 'hold_group') {
        gate.events.push('making');
        await new Promise<void>((resolve) => (gate.release = resolve));
      }
      const group: CommandGroup = {
        join: async (pid) => {
          gate.joined.push(pid);
          gate.events.push('join');
          if (mode === 'fail_join') throw new Error('cannot join');
          if (mode === 'hold') await new Promise<void>((resolve) => (gate.release = resolve));
          gate.events.push('joined');
        },
        remove: async () => {
          gate.removed += 1;
          gate.events.push('removed');
        },
      };
      return group;
    },
    close: async () => {},
  };
}

t.test(
  'the gate: a command runs only once it is in its group and bounded by its rlimits',
  { skip },
  async (t) => {
    const gate: Gate = {
      enforcedBy: 'cgroup_v1',
      next: 'hold',
      release: () => {},
      joined: [],
      removed: 0,
      events: [],
    };
    let failLimit = false;
    const limitProcess: LimitProcess = (pid, resource, bytes) => {
      gate.events.push(`limit ${resource} ${bytes}`);
      if (failLimit) throw Object.assign(new Error('prlimit'), { code: 'ESRCH' });
      nativeAddon().limitProcess(pid, resource, bytes);
    };
    const bounds = { memoryBytes: 3 * 2 ** 30, processes: 99 };
    const commands = await testSandbox(t, { control: gatedControl(gate), limitProcess, bounds });
    const workspace = await rootDirectory(t);
    killOnTeardown(t, 'gate-98771');

    const running = run(commands, workspace, 'echo gate-98771 > started; cat /proc/self/limits');
    await until(() => gate.joined.length === 1, 'the join is asked for');
    const gatePid = gate.joined[0]!;
    // The gate carries the command in its arguments, waiting to become bwrap.
    t.same(
      await processesWith('gate-98771'),
      [gatePid],
      'the gate’s own process joins, before it becomes bwrap',
    );
    t.same(gate.events, ['join'], 'no rlimit is set before the join is done');
    await t.rejects(stat(join(workspace, 'started')), { code: 'ENOENT' }, 'and nothing has run');
    t.match(
      await readFile(`/proc/${gatePid}/cmdline`, 'utf8'),
      /^\/bin\/sh\0-c\0read -r go/,
      'it waits on its stdin',
    );

    gate.release();
    const outcome = await running;
    t.equal(outcome.exitCode, 0, 'the command ran');
    t.equal(await readFile(join(workspace, 'started'), 'utf8'), 'gate-98771\n');
    const limits = limitsOf(outcome.output);
    t.equal(limits.get('Max core file size'), '0 0', 'no core dump, soft or hard');
    t.equal(
      limits.get('Max file size'),
      `${COMMAND_BOUNDS.file_size_bytes} ${COMMAND_BOUNDS.file_size_bytes}`,
      'no file larger than the bound',
    );
    t.equal(limits.get('Max data size'), 'unlimited unlimited', 'memory is the cgroup’s to bound');
    await until(() => gate.removed === 1, 'the group is removed');
    t.same(gate.events, [
      'join',
      'joined',
      'limit core 0',
      `limit fsize ${COMMAND_BOUNDS.file_size_bytes}`,
      'removed',
    ]);

    gate.enforcedBy = 'rlimit';
    gate.next = 'plain';
    gate.events = [];
    const bounded = await run(commands, workspace, 'cat /proc/self/limits');
    t.equal(
      limitsOf(bounded.output).get('Max data size'),
      `${bounds.memoryBytes} ${bounds.memoryBytes}`,
      'without a cgroup, memory is bounded by RLIMIT_DATA',
    );
    t.ok(gate.events.includes(`limit data ${bounds.memoryBytes}`));

    gate.enforcedBy = 'cgroup_v1';
    for (const [next, what] of [
      ['fail_join', 'a group that cannot be joined'],
      ['refuse', 'a group that cannot be made'],
    ] as const) {
      gate.next = next;
      gate.removed = 0;
      await t.rejects(
        run(commands, workspace, `echo gate-98771 > '${next}'`),
        { name: 'SandboxStartFailed' },
        what,
      );
      await t.rejects(stat(join(workspace, next)), { code: 'ENOENT' }, `${what}: the command never ran`);
      if (next === 'fail_join') t.equal(gate.removed, 1, `${what}: the group is removed`);
    }
    gate.next = 'hold_group';
    gate.removed = 0;
    gate.events = [];
    const controller = new AbortController();
    const givenUp = commands.run({
      command: 'echo gate-98771 > given-up',
      workspace: ownFolder(workspace),
      session: 'ses_test',
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    await until(() => gate.events.includes('making'), 'its group is being made');
    controller.abort();
    gate.release();
    t.match(
      await givenUp,
      { cancelled: true, exitCode: null },
      'a command given up while its group was made',
    );
    await until(() => gate.removed === 1, 'that group is removed');
    t.same(gate.events, ['making', 'removed'], 'never joined');
    await t.rejects(stat(join(workspace, 'given-up')), { code: 'ENOENT' });

    gate.next = 'plain';
    failLimit = true;
    await t.rejects(
      run(commands, workspace, `echo gate-98771 > limited`),
      { name: 'SandboxStartFailed' },
      'an rlimit that cannot be set',
    );
    await t.rejects(stat(join(workspace, 'limited')), { code: 'ENOENT' });
    t.same(await processesLeft('gate-98771'), [], 'no gate is left waiting');
    t.equal(commands.running, 0);
  },
);

const bounds = { memoryBytes: 512 * 2 ** 20, processes: 64 };
const control = await resourceControl(bounds, realTime);
t.teardown(() => control.close());
const cgroupsUnavailable =
  control.enforcedBy === 'cgroup_v1' ? false : 'no cgroup v1 hierarchy this process can make groups in';

t.test(
  'a cgroup of its own, for real: joined before the command runs, removed after',
  { skip: skip || cgroupsUnavailable },
  async (t) => {
    const commands = await testSandbox(t, { control, bounds });
    const workspace = await rootDirectory(t);
    killOnTeardown(t, 'sleep 98782', 'sleep 98783', 'sleep 98784');
    // Inside, a cgroup namespace shows the command's group as the root: its path is read from outside.
    const groups = async (marker: string) => {
      await processStarted(marker);
      const [pid] = await processesWith(marker, true);
      const text = await readFile(`/proc/${pid}/cgroup`, 'utf8');
      return ['memory', 'pids'].map((controller) => {
        const path = new RegExp(`^\\d+:${controller}:(.*/magid-${process.pid}/command-\\d+)$`, 'm').exec(
          text,
        );
        return join('/sys/fs/cgroup', controller, path?.[1] ?? 'none');
      });
    };
    const gone = (directories: string[]) => directories.every((directory) => !existsSync(directory));

    const inside = await run(commands, workspace, 'grep -E ":(memory|pids):" /proc/self/cgroup');
    t.match(
      inside.output,
      /^\d+:(memory|pids):\/\n\d+:(memory|pids):\/\n$/,
      'inside, its own group is the root',
    );
    const stopFirst = new AbortController();
    const firstRun = commands.run({
      command: 'sleep 98783',
      workspace: ownFolder(workspace),
      session: 'ses_test',
      timeoutMs: 60_000,
      signal: stopFirst.signal,
    });
    const first = await groups('sleep 98783');
    t.match(first[0], /command-2$/, 'the command is in its memory group');
    t.match(first[1], /command-2$/, 'and in its pids group');
    stopFirst.abort();
    await firstRun;
    await until(() => gone(first), 'the group is removed once the command has ended');
    // Its process left in the background keeps the group busy until the kernel has killed it.
    const stopSecond = new AbortController();
    const secondRun = commands.run({
      command: 'sleep 98782 & sleep 98784',
      workspace: ownFolder(workspace),
      session: 'ses_test',
      timeoutMs: 60_000,
      signal: stopSecond.signal,
    });
    const second = await groups('sleep 98784');
    t.match(second[1], /command-3$/);
    stopSecond.abort();
    await secondRun;
    t.same(await processesLeft('sleep 98782'), [], 'the process it left in the background is gone');
    await until(() => gone(second), 'and so is its group');
    await run(commands, workspace, 'sleep 98782 & true');
    await commands.close();
    t.notOk(existsSync(join(first[1]!, '..')), 'close removes the last group and the daemon’s own');
  },
);
