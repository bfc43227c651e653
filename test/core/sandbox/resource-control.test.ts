import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Clock } from '../../../core/clock.js';
import {
  type CgroupView,
  REMOVAL_RETRY_MS,
  resourceControl,
} from '../../../core/sandbox/resource-control.js';

const BOUNDS = { memoryBytes: 268_435_456, processes: 32 };

/** The waits asked of `instant`, which ends each at once: a busy group goes through its retries quickly. */
let waits: number[] = [];
const instant: Clock = {
  now: () => 0,
  wallNow: () => 0,
  setTimeout(fn, ms) {
    waits.push(ms);
    const handle = setImmediate(fn);
    return { cancel: () => clearImmediate(handle) };
  },
};
/** A pid no process here has, so that the fake hierarchies' names are the test's own. */
const PID = 424_242;

function scratch(t: Test): string {
  const directory = mkdtempSync(join(tmpdir(), 'magi-cgroup-test-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

const read = (path: string) => readFileSync(path, 'utf8');

/** A mountinfo line of a cgroup filesystem mounted at `mountPoint` from the cgroup path `root`. */
function mountLine(
  id: number,
  root: string,
  mountPoint: string,
  fsType: string,
  superOptions: string,
): string {
  return `${id} 31 0:${id} ${root} ${mountPoint} rw,nosuid,nodev,noexec,relatime shared:${id} - ${fsType} ${fsType} ${superOptions}`;
}

function cgroupV2View(mount: string, own: string): CgroupView {
  return {
    mountinfo: [
      '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw',
      mountLine(30, '/', mount, 'cgroup2', 'rw,nsdelegate'),
    ].join('\n'),
    cgroup: `0::${own}\n`,
    pid: PID,
  };
}

/** Where this process's cgroup lies in the v1 hierarchy holding `controller`, or null. */
function ownV1Directory(controller: string): string | null {
  const mount = read('/proc/self/mountinfo')
    .split('\n')
    .map((line) => line.split(' - '))
    .find(([, after]) => {
      const [type, , options = ''] = (after ?? '').split(' ');
      return type === 'cgroup' && options.split(',').includes(controller);
    });
  const line = read('/proc/self/cgroup')
    .split('\n')
    .find((entry) => entry.split(':')[1]?.split(',').includes(controller));
  if (mount === undefined || line === undefined) return null;
  const [, , , root = '', mountPoint = ''] = mount[0]!.split(' ');
  const path = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
  return join(mountPoint, root === '/' ? path : path.slice(root.length));
}

const memoryV1 = ownV1Directory('memory');
const pidsV1 = ownV1Directory('pids');
const v1Writable =
  memoryV1 !== null &&
  pidsV1 !== null &&
  process.getuid?.() === 0 &&
  existsSync(join(pidsV1, 'cgroup.procs'));

function sleeper(t: Test): ChildProcess {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  t.teardown(() => child.kill('SIGKILL'));
  return child;
}

async function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
}

t.test(
  "cgroup v1, for real: a command's group is made, configured, joined and removed",
  { skip: v1Writable ? false : 'no writable cgroup v1 memory and pids hierarchy here' },
  async (t) => {
    const control = await resourceControl(BOUNDS, instant);
    t.teardown(() => control.close());
    t.equal(control.enforcedBy, 'cgroup_v1');
    const parents = [join(memoryV1!, `magid-${process.pid}`), join(pidsV1!, `magid-${process.pid}`)];
    for (const parent of parents) t.ok(existsSync(parent), `${parent} is made`);

    const group = await control.group();
    const [memory, pids] = parents.map((parent) => join(parent, 'command-1')) as [string, string];
    t.equal(read(join(memory, 'memory.limit_in_bytes')).trim(), String(BOUNDS.memoryBytes));
    if (existsSync(join(memory, 'memory.memsw.limit_in_bytes'))) {
      t.equal(
        read(join(memory, 'memory.memsw.limit_in_bytes')).trim(),
        String(BOUNDS.memoryBytes),
        'and swap',
      );
    }
    t.equal(read(join(pids, 'pids.max')).trim(), String(BOUNDS.processes));

    const child = sleeper(t);
    await group!.join(child.pid!);
    const membership = read(`/proc/${child.pid}/cgroup`);
    t.match(membership, new RegExp(`:memory:.*/magid-${process.pid}/command-1\\n`));
    t.match(membership, new RegExp(`:pids:.*/magid-${process.pid}/command-1\\n`));

    waits = [];
    await group!.remove();
    t.ok(existsSync(pids), 'a group with a process in it stays');
    t.same(waits, REMOVAL_RETRY_MS, 'once tried again after each wait');
    child.kill('SIGKILL');
    await ended(child);
    const next = await control.group();
    t.notOk(existsSync(pids), 'and is removed before the next one is made');
    t.notOk(existsSync(memory));
    t.ok(existsSync(join(parents[1]!, 'command-2')), 'the next is numbered on');
    await next!.remove();
    t.notOk(existsSync(join(parents[1]!, 'command-2')), 'an empty group goes at once');

    const unused = await control.group();
    t.ok(unused, 'a group never removed by its command');
    await control.close();
    for (const parent of parents) t.notOk(existsSync(parent), `close removes it and ${parent}`);
  },
);

t.test(
  'cgroup v1, for real: the groups a daemon killed with SIGKILL left are removed at the next start',
  { skip: v1Writable ? false : 'no writable cgroup v1 memory and pids hierarchy here' },
  async (t) => {
    // A pid that was a process once and is none now: a child, reaped.
    const gone = sleeper(t);
    const deadPid = gone.pid!;
    gone.kill('SIGKILL');
    await ended(gone);
    const left = [memoryV1!, pidsV1!].map((directory) => join(directory, `magid-${deadPid}`));
    for (const parent of left) mkdirSync(join(parent, 'command-3'), { recursive: true });
    t.teardown(() => {
      // A cgroup folder goes with rmdir alone, never by removing its files.
      for (const folder of left.flatMap((parent) => [join(parent, 'command-3'), parent])) {
        if (existsSync(folder)) rmdirSync(folder);
      }
    });
    const control = await resourceControl(BOUNDS, instant);
    t.teardown(() => control.close());
    t.equal(control.enforcedBy, 'cgroup_v1');
    for (const parent of left) t.notOk(existsSync(parent), `${parent} is gone with its command group`);
  },
);

t.test(
  'a group kept busy for a moment by a dying process is removed by a later attempt',
  { skip: v1Writable ? false : 'no writable cgroup v1 memory and pids hierarchy here' },
  async (t) => {
    const child = sleeper(t);
    const asked: number[] = [];
    // The process ends during the third wait, as one killed with its namespace does a moment later.
    const dying: Clock = {
      ...instant,
      setTimeout(fn, ms) {
        asked.push(ms);
        if (asked.length === 3) {
          child.kill('SIGKILL');
          void ended(child).then(fn);
        } else setImmediate(fn);
        return { cancel() {} };
      },
    };
    const control = await resourceControl(BOUNDS, dying);
    t.teardown(() => control.close());
    const group = await control.group();
    await group!.join(child.pid!);
    await group!.remove();
    t.same(asked, REMOVAL_RETRY_MS.slice(0, 3), 'tried again after each wait until it could be');
    t.notOk(existsSync(join(pidsV1!, `magid-${process.pid}`, 'command-1')), 'and removed');
  },
);

t.test(
  'a group still busy at close is left, and close never throws',
  { skip: v1Writable ? false : 'no cgroup v1' },
  async (t) => {
    const control = await resourceControl(BOUNDS, instant);
    const group = await control.group();
    const child = sleeper(t);
    await group!.join(child.pid!);
    await control.close();
    const busy = join(pidsV1!, `magid-${process.pid}`, 'command-1');
    t.ok(existsSync(busy), 'a process is still in it');
    child.kill('SIGKILL');
    await ended(child);
    await control.close();
    t.notOk(existsSync(busy), 'a second close removes it');
  },
);

t.test('cgroup v2 where the daemon is alone in its cgroup: it moves into a leaf first', async (t) => {
  const mount = scratch(t);
  const own = join(mount, 'magid.service');
  write(join(own, 'cgroup.controllers'), 'cpuset cpu io memory hugetlb pids rdma misc\n');
  write(join(own, 'cgroup.procs'), `${PID}\n`);
  const control = await resourceControl(BOUNDS, instant, cgroupV2View(mount, '/magid.service'));
  t.equal(control.enforcedBy, 'cgroup_v2');
  t.equal(read(join(own, `magid-${PID}-daemon`, 'cgroup.procs')), String(PID), 'the daemon joins the leaf');
  t.equal(read(join(own, 'cgroup.subtree_control')), '+memory +pids', 'its cgroup hands both down');
  const parent = join(own, `magid-${PID}-commands`);
  t.equal(read(join(parent, 'cgroup.subtree_control')), '+memory +pids', 'and so does the commands’ parent');

  const group = await control.group();
  const directory = join(parent, 'command-1');
  t.same(
    ['memory.max', 'memory.swap.max', 'pids.max'].map((name) => read(join(directory, name))),
    [String(BOUNDS.memoryBytes), '0', String(BOUNDS.processes)],
    'memory without swap, and processes',
  );
  await group!.join(4321);
  t.equal(read(join(directory, 'cgroup.procs')), '4321');

  await group!.remove();
  t.ok(existsSync(directory), 'a group that cannot be removed yet stays (here: its files)');
  for (const name of readdirSync(directory)) rmSync(join(directory, name));
  await control.group();
  t.notOk(existsSync(directory), 'tried again before the next one');
  for (const name of readdirSync(join(parent, 'command-2'))) rmSync(join(parent, 'command-2', name));
  rmSync(join(parent, 'cgroup.subtree_control'));
  await control.close();
  t.notOk(existsSync(parent), 'close removes what is left and the parent');
});

t.test('cgroup v2 shared with other processes: no leaf, the controllers enabled where it is', async (t) => {
  const mount = scratch(t);
  write(join(mount, 'cgroup.controllers'), 'memory pids');
  write(join(mount, 'cgroup.procs'), `1\n${PID}\n`);
  const control = await resourceControl(BOUNDS, instant, cgroupV2View(mount, '/'));
  t.equal(control.enforcedBy, 'cgroup_v2');
  t.notOk(existsSync(join(mount, `magid-${PID}-daemon`)));
  t.ok(existsSync(join(mount, `magid-${PID}-commands`)));
});

t.test(
  'cgroup v1 read from mountinfo: a mount of a sub-cgroup, escaped paths, swap accounting',
  async (t) => {
    const base = scratch(t);
    const memoryMount = join(base, 'memory with space');
    const pidsMount = join(base, 'pids');
    // The memory hierarchy is mounted from /outer (a container's view); swap is accounted.
    write(join(memoryMount, 'inner', `magid-${PID}`, 'memory.memsw.limit_in_bytes'), '');
    mkdirSync(join(pidsMount, 'outer', 'inner'), { recursive: true });
    const view: CgroupView = {
      mountinfo: [
        mountLine(32, '/', join(base, 'cpu'), 'cgroup', 'rw,cpu'),
        mountLine(35, '/outer', memoryMount.replaceAll(' ', '\\040'), 'cgroup', 'rw,memory'),
        mountLine(39, '/', pidsMount, 'cgroup', 'rw,pids'),
      ].join('\n'),
      cgroup: ['9:name=systemd:/', '8:pids:/outer/inner', '4:memory:/outer/inner', '1:cpu:/', '0::/'].join(
        '\n',
      ),
      pid: PID,
    };
    const control = await resourceControl(BOUNDS, instant, view);
    t.equal(control.enforcedBy, 'cgroup_v1');
    await control.group();
    const memory = join(memoryMount, 'inner', `magid-${PID}`, 'command-1');
    t.equal(read(join(memory, 'memory.limit_in_bytes')), String(BOUNDS.memoryBytes));
    t.equal(
      read(join(memory, 'memory.memsw.limit_in_bytes')),
      String(BOUNDS.memoryBytes),
      'swap is bounded too',
    );
    t.equal(
      read(join(pidsMount, 'outer', 'inner', `magid-${PID}`, 'command-1', 'pids.max')),
      String(BOUNDS.processes),
    );
  },
);

t.test('anything else, or any failure on the way, leaves rlimits alone and never throws', async (t) => {
  const base = scratch(t);
  write(join(base, 'a-file'), '');
  const v2 = join(base, 'v2');
  write(join(v2, 'cgroup.controllers'), 'cpu io memory');
  write(join(v2, 'cgroup.procs'), '');
  const noControllers = join(base, 'v2-bare');
  mkdirSync(noControllers);
  const cases: Array<[string, CgroupView]> = [
    ['nothing mounted', { mountinfo: '', cgroup: '', pid: PID }],
    ['text that is not mountinfo', { mountinfo: 'garbage - \n\n - x', cgroup: 'junk', pid: PID }],
    [
      'v1 memory without pids',
      { mountinfo: mountLine(35, '/', base, 'cgroup', 'rw,memory'), cgroup: '4:memory:/', pid: PID },
    ],
    [
      'v1 whose cgroup lies outside its mount',
      {
        mountinfo: [
          mountLine(35, '/outer', base, 'cgroup', 'rw,memory'),
          mountLine(39, '/outer', base, 'cgroup', 'rw,pids'),
        ].join('\n'),
        cgroup: '8:pids:/elsewhere\n4:memory:/elsewhere',
        pid: PID,
      },
    ],
    [
      'v1 that cannot be written',
      {
        mountinfo: [
          mountLine(35, '/', join(base, 'a-file'), 'cgroup', 'rw,memory'),
          mountLine(39, '/', join(base, 'a-file'), 'cgroup', 'rw,pids'),
        ].join('\n'),
        cgroup: '8:pids:/\n4:memory:/',
        pid: PID,
      },
    ],
    ['v2 without the pids controller', cgroupV2View(v2, '/')],
    ['v2 without cgroup.controllers', cgroupV2View(noControllers, '/')],
    ['v2 that is not mounted', { mountinfo: '', cgroup: '0::/', pid: PID }],
  ];
  for (const [what, view] of cases) {
    const control = await resourceControl(BOUNDS, instant, view);
    t.equal(control.enforcedBy, 'rlimit', what);
    t.equal(await control.group(), null, `${what}: no group`);
    await control.close();
  }
});

t.test('a group that cannot be made rejects, leaving nothing of itself', async (t) => {
  const mount = scratch(t);
  write(join(mount, 'cgroup.controllers'), 'memory pids');
  write(join(mount, 'cgroup.procs'), '');
  const control = await resourceControl(BOUNDS, instant, cgroupV2View(mount, '/'));
  t.equal(control.enforcedBy, 'cgroup_v2');
  const parent = join(mount, `magid-${PID}-commands`);
  rmSync(parent, { recursive: true });
  writeFileSync(parent, 'no longer a folder');
  await t.rejects(control.group(), { code: 'ENOTDIR' });
  rmSync(parent);
  mkdirSync(parent);
  // The second group is numbered on; a group left half made is not tried again.
  const group = await control.group();
  t.same(readdirSync(parent), ['command-2']);
  t.ok(group);
});
