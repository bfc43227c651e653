import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The groups a daemon makes beside its own cgroup: `magid-<pid>` (v1), `magid-<pid>-commands` and `-daemon` (v2). */
const DAEMON_GROUP = /^magid-(\d+)(?:-commands|-daemon)?$/;
const COMMAND_GROUP = /^command-\d+$/;

/** Whether a process lives: a signal 0 reaches it, or is refused because it is another user's. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes, from `directory` (a cgroup this daemon makes its groups in), the groups a daemon that is gone
 * left behind: one killed with SIGKILL never removed its own. A group of a process that still lives (another
 * daemon, or a reused pid) is left alone, as is one that still holds a process (rmdir refuses it). Never
 * throws: a group that cannot be removed stays until the next start.
 */
export async function sweepStaleGroups(
  directory: string,
  ownPid: number,
  alive: (pid: number) => boolean = processAlive,
): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(DAEMON_GROUP.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(pid) || pid === ownPid || alive(pid)) continue;
    const group = join(directory, name);
    try {
      for (const child of await readdir(group)) {
        if (COMMAND_GROUP.test(child)) await rmdir(join(group, child)).catch(() => {});
      }
      await rmdir(group);
      removed.push(name);
    } catch {
      // busy or gone: left as it is
    }
  }
  return removed;
}
