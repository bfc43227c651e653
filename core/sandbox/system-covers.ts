import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SSH_CONFIG, SSH_HOST_KEY, SYSTEM_SECRETS } from '../confinement/system-secrets.js';

/**
 * What the machine itself keeps that a command must neither change nor read, following Docker's defaults
 * (moby's `oci/defaults.go`) for /proc and /sys, and the system's own secrets for the files a daemon run as
 * root could otherwise read (uid 0 owns them, so no capability is needed).
 */

/**
 * Bound read-only onto themselves after the fresh /proc: the kernel's settings (a root command writing
 * `kernel/core_pattern` would have the kernel run a program of its choice as root outside every
 * namespace), the magic SysRq key, interrupt routing, buses and filesystems. bwrap's own read-only bind of
 * some of them is skipped when it runs as root with every capability dropped.
 */
export const PROC_READ_ONLY: readonly string[] = [
  '/proc/bus',
  '/proc/fs',
  '/proc/irq',
  '/proc/sys',
  '/proc/sysrq-trigger',
];

/** Covered with an empty file or folder where they exist: kernel memory, keys, timers, hardware. */
const MASKED: readonly string[] = [
  '/proc/acpi',
  '/proc/asound',
  '/proc/interrupts',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];

export interface SystemCover {
  path: string;
  kind: 'directory' | 'file';
}

export interface SystemCovers {
  /** Under /proc and /sys: bound after the fresh /proc, before anything else. */
  masked: SystemCover[];
  /** The system's secrets: covered after the workspace's bind, so that no workspace uncovers one. */
  secrets: SystemCover[];
}

/** Which of the places above exist on this machine (a bind needs its target), found once at startup. */
export async function resolveSystemCovers(): Promise<SystemCovers> {
  const hostKeys = await readdir(SSH_CONFIG).then(
    (names) => names.filter((name) => SSH_HOST_KEY.test(name)).map((name) => join(SSH_CONFIG, name)),
    () => [],
  );
  const [masked, secrets] = await Promise.all([
    existing(MASKED),
    existing([...SYSTEM_SECRETS, ...hostKeys.sort()]),
  ]);
  return { masked, secrets };
}

async function existing(paths: readonly string[]): Promise<SystemCover[]> {
  const found = await Promise.all(
    paths.map(async (path): Promise<SystemCover | null> => {
      try {
        // A link is covered where it leads: a bind over a link's name lands on its target anyway.
        const real = await realpath(path);
        const stats = await stat(real);
        return { path: real, kind: stats.isDirectory() ? 'directory' : 'file' };
      } catch {
        return null;
      }
    }),
  );
  const covers = found.filter((cover): cover is SystemCover => cover !== null);
  return covers.filter((cover, index) => covers.findIndex((other) => other.path === cover.path) === index);
}
