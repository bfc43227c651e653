import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { sweepStaleGroups } from './stale-groups.js';

/** How a command's memory and process count are bounded: by a cgroup of its own, or by rlimits alone. */
export type BoundsEnforcement = 'cgroup_v1' | 'cgroup_v2' | 'rlimit';

export interface CommandBounds {
  memoryBytes: number;
  processes: number;
}

/** The cgroup of one command: its process joins it before it runs anything, and it is removed after. */
export interface CommandGroup {
  /** Moves `pid` (the command's first process, not started yet) into the group. */
  join(pid: number): Promise<void>;
  /**
   * Removes the group once its command has ended. A process the kernel is still killing with the command's
   * PID namespace keeps it busy for a moment: it is tried again after REMOVAL_RETRY_MS, then before the next
   * group is made, and at close.
   */
  remove(): Promise<void>;
}

export interface ResourceControl {
  readonly enforcedBy: BoundsEnforcement;
  /** A fresh group for one command, or null where rlimits bound it alone. Rejects when it cannot be made. */
  group(): Promise<CommandGroup | null>;
  /** Removes whatever groups are left, and the daemon's own. */
  close(): Promise<void>;
}

/** What the kernel says of this process's cgroups: /proc/self/mountinfo and /proc/self/cgroup. */
export interface CgroupView {
  mountinfo: string;
  cgroup: string;
  pid: number;
}

/**
 * The waits before each new attempt at removing a busy group, about 1.3 s in all: a process killed with
 * its PID namespace leaves its cgroup within milliseconds, a little longer on a loaded machine.
 */
export const REMOVAL_RETRY_MS: readonly number[] = [10, 20, 40, 80, 160, 320, 640];

const RLIMITS_ONLY: ResourceControl = {
  enforcedBy: 'rlimit',
  group: async () => null,
  close: async () => {},
};

/**
 * Finds where this daemon may make a cgroup for each command, with the memory and pids controllers: under
 * its own cgroup of the v1 `memory` and `pids` hierarchies, or under its own cgroup v2 when that cgroup
 * can hand both controllers to children (a systemd service with `Delegate=yes`, or a cgroup holding this
 * process alone). Anything else, or any failure on the way, leaves rlimits alone; never throws.
 */
export async function resourceControl(
  bounds: CommandBounds,
  clock: Clock,
  view?: CgroupView,
): Promise<ResourceControl> {
  try {
    const seen = view ?? (await ownCgroupView());
    return (await cgroupV1(bounds, seen, clock)) ?? (await cgroupV2(bounds, seen, clock)) ?? RLIMITS_ONLY;
  } catch {
    return RLIMITS_ONLY;
  }
}

async function ownCgroupView(): Promise<CgroupView> {
  const [mountinfo, cgroup] = await Promise.all([
    readFile('/proc/self/mountinfo', 'utf8'),
    readFile('/proc/self/cgroup', 'utf8'),
  ]);
  return { mountinfo, cgroup, pid: process.pid };
}

interface Mount {
  mountPoint: string;
  /** The cgroup path the mount's root is (usually `/`). */
  root: string;
  fsType: string;
  superOptions: string[];
}

/** mountinfo(5): `id parent major:minor root mount-point options [optional…] - type source super-options`. */
function mountsOf(mountinfo: string): Mount[] {
  return mountinfo
    .split('\n')
    .filter((line) => line.includes(' - '))
    .map((line) => {
      const [before, after] = line.split(' - ') as [string, string];
      const fields = before.split(' ');
      const [fsType = '', , superOptions = ''] = after.split(' ');
      return {
        root: unescapeMountPath(fields[3] ?? ''),
        mountPoint: unescapeMountPath(fields[4] ?? ''),
        fsType,
        superOptions: superOptions.split(','),
      };
    });
}

/** mountinfo writes a space, a tab, a newline and a backslash in a path as octal escapes. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** cgroup(7): `hierarchy-id:controllers:path`, and `0::path` for the v2 hierarchy. */
function cgroupPaths(cgroup: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of cgroup.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const [, controllers = '', path = ''] = match;
    if (controllers === '') paths.set('', path);
    for (const controller of controllers.split(',')) if (controller !== '') paths.set(controller, path);
  }
  return paths;
}

/** Where this process's cgroup of a hierarchy lies in the filesystem, or null when it is not mounted. */
function directoryOf(mount: Mount | undefined, path: string | undefined): string | null {
  if (!mount || path === undefined) return null;
  const relative =
    mount.root === '/' ? path : path.startsWith(mount.root) ? path.slice(mount.root.length) : null;
  return relative === null ? null : join(mount.mountPoint, relative);
}

async function cgroupV1(
  bounds: CommandBounds,
  view: CgroupView,
  clock: Clock,
): Promise<ResourceControl | null> {
  const mounts = mountsOf(view.mountinfo).filter((mount) => mount.fsType === 'cgroup');
  const paths = cgroupPaths(view.cgroup);
  const memory = directoryOf(
    mounts.find((mount) => mount.superOptions.includes('memory')),
    paths.get('memory'),
  );
  const pids = directoryOf(
    mounts.find((mount) => mount.superOptions.includes('pids')),
    paths.get('pids'),
  );
  if (memory === null || pids === null) return null;
  await Promise.all([memory, pids].map((directory) => sweepStaleGroups(directory, view.pid)));
  const parents = [join(memory, `magid-${view.pid}`), join(pids, `magid-${view.pid}`)] as const;
  for (const parent of parents) await mkdir(parent, { recursive: true });
  const swapLimited = await exists(join(parents[0], 'memory.memsw.limit_in_bytes'));
  return new CgroupControl('cgroup_v1', [...parents], clock, async (directories) => {
    const [memoryGroup, pidsGroup] = directories as [string, string];
    await writeFile(join(memoryGroup, 'memory.limit_in_bytes'), String(bounds.memoryBytes));
    // Without it a command could go on in swap once its memory is full.
    if (swapLimited)
      await writeFile(join(memoryGroup, 'memory.memsw.limit_in_bytes'), String(bounds.memoryBytes));
    await writeFile(join(pidsGroup, 'pids.max'), String(bounds.processes));
  });
}

const V2_CONTROLLERS = ['memory', 'pids'] as const;

async function cgroupV2(
  bounds: CommandBounds,
  view: CgroupView,
  clock: Clock,
): Promise<ResourceControl | null> {
  const mount = mountsOf(view.mountinfo).find((candidate) => candidate.fsType === 'cgroup2');
  const own = directoryOf(mount, cgroupPaths(view.cgroup).get(''));
  if (own === null) return null;
  const available = (await readFile(join(own, 'cgroup.controllers'), 'utf8')).split(/\s+/);
  if (!V2_CONTROLLERS.every((controller) => available.includes(controller))) return null;
  await sweepStaleGroups(own, view.pid);
  // A cgroup with processes of its own cannot hand controllers to children ("no internal processes"): a
  // cgroup holding this daemon alone moves it into a leaf first.
  const members = (await readFile(join(own, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean);
  if (members.length === 1 && members[0] === String(view.pid)) {
    const leaf = join(own, `magid-${view.pid}-daemon`);
    await mkdir(leaf, { recursive: true });
    await writeFile(join(leaf, 'cgroup.procs'), String(view.pid));
  }
  await enableControllers(own);
  const parent = join(own, `magid-${view.pid}-commands`);
  await mkdir(parent, { recursive: true });
  await enableControllers(parent);
  return new CgroupControl('cgroup_v2', [parent], clock, async ([group]) => {
    await writeFile(join(group!, 'memory.max'), String(bounds.memoryBytes));
    await writeFile(join(group!, 'memory.swap.max'), '0');
    await writeFile(join(group!, 'pids.max'), String(bounds.processes));
  });
}

async function enableControllers(directory: string): Promise<void> {
  await writeFile(
    join(directory, 'cgroup.subtree_control'),
    V2_CONTROLLERS.map((name) => `+${name}`).join(' '),
  );
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Command groups made as children of one parent per hierarchy, numbered, each configured before use. */
class CgroupControl implements ResourceControl {
  readonly enforcedBy: BoundsEnforcement;
  readonly #parents: readonly string[];
  readonly #clock: Clock;
  readonly #configure: (directories: readonly string[]) => Promise<void>;
  readonly #left = new Set<readonly string[]>();
  /** Groups whose command has ended but that were still busy when it did. */
  readonly #busy = new Set<readonly string[]>();
  #next = 0;

  constructor(
    enforcedBy: BoundsEnforcement,
    parents: readonly string[],
    clock: Clock,
    configure: (directories: readonly string[]) => Promise<void>,
  ) {
    this.enforcedBy = enforcedBy;
    this.#parents = parents;
    this.#clock = clock;
    this.#configure = configure;
  }

  async group(): Promise<CommandGroup> {
    for (const directories of [...this.#busy]) await this.#remove(directories);
    this.#next += 1;
    const directories = this.#parents.map((parent) => join(parent, `command-${this.#next}`));
    this.#left.add(directories);
    try {
      for (const directory of directories) await mkdir(directory);
      await this.#configure(directories);
    } catch (error) {
      await this.#remove(directories);
      throw error;
    }
    return {
      join: async (pid) => {
        for (const directory of directories) await writeFile(join(directory, 'cgroup.procs'), String(pid));
      },
      remove: () => this.#removeSoon(directories),
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#left].map((directories) => this.#removeSoon(directories)));
    for (const parent of this.#parents) await rmdir(parent).catch(() => {});
  }

  /** Removes the group, trying again a few times while it is busy; one still busy then is tried later. */
  async #removeSoon(directories: readonly string[]): Promise<void> {
    if (await this.#remove(directories)) return;
    for (const delay of REMOVAL_RETRY_MS) {
      await new Promise<void>((resolve) => this.#clock.setTimeout(resolve, delay));
      if (await this.#remove(directories)) return;
    }
    this.#busy.add(directories);
  }

  /** Whether every directory of the group is gone. */
  async #remove(directories: readonly string[]): Promise<boolean> {
    let removed = true;
    for (const directory of directories) {
      try {
        await rmdir(directory);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') removed = false;
      }
    }
    if (removed) {
      this.#left.delete(directories);
      this.#busy.delete(directories);
    }
    return removed;
  }
}
