import {
  type BigIntStats,
  closeSync,
  type Dirent,
  lstatSync,
  openSync,
  readlinkSync,
  statSync,
} from 'node:fs';
import { DIRECTORY_FLAGS, errnoOf, type Identity } from '../capture/descriptor-walk.js';
import { ScanRefusal } from './scan-refusal.js';

/**
 * The file system steps of a workspace walk, each beneath a held descriptor: Node has no openat, so a name is
 * reached as `/proc/self/fd/<parent>/<name>`, and names stay bytes (they need not be UTF-8).
 */

export type EntryType = 'directory' | 'file' | 'symlink';

export function beneathBytes(fd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
}

export function realPathOf(fd: number): Buffer {
  return readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
}

export function identityOf(path: string): Identity | null {
  try {
    const { dev, ino } = statSync(path, { bigint: true });
    return { dev, ino };
  } catch {
    return null;
  }
}

/** Opens `name` beneath `fd` without following a symlink, or null when there is nothing there to open. */
export function openBeneath(fd: number, name: Buffer, flags: number): number | null {
  try {
    return openSync(beneathBytes(fd, name), flags);
  } catch (error) {
    // Gone, swapped for a symlink or something else since it was listed: there is nothing there to walk.
    if (isGone(error) || errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * Opens the folder `name` beneath `fd` without following a symlink: its descriptor, `denied` when the daemon
 * may not open it, or null when there is no folder there.
 */
export function openFolderBeneath(fd: number, name: Buffer): number | 'denied' | null {
  try {
    return openSync(beneathBytes(fd, name), DIRECTORY_FLAGS);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'EACCES' || code === 'EPERM') return 'denied';
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * Opens each of `names` in turn beneath `rootFd` as a folder, never following a symlink, and returns the
 * last one's descriptor (`rootFd` itself for no names), or null when one of them is no longer a folder there.
 */
export function openFolderPath(rootFd: number, names: readonly Buffer[]): number | null {
  let fd = rootFd;
  try {
    for (const name of names) {
      const next = openBeneath(fd, name, DIRECTORY_FLAGS);
      const parent = fd;
      fd = next ?? rootFd;
      if (parent !== rootFd) closeSync(parent);
      if (next === null) return null;
    }
    return fd;
  } catch (error) {
    if (fd !== rootFd) closeSync(fd);
    throw error;
  }
}

/** Like openFolderPath, but a folder no longer there refuses the scan: prepare nothing rather than half. */
export function openHeldPath(rootFd: number, names: readonly Buffer[]): number {
  const fd = openFolderPath(rootFd, names);
  if (fd === null) throw new ScanRefusal('workspace_unavailable');
  return fd;
}

/** The entry's type from the listing, or from an lstat where the filesystem does not say. */
export function entryType(fd: number, entry: Dirent<Buffer>): EntryType | null {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'directory';
  if (
    entry.isFile() ||
    entry.isFIFO() ||
    entry.isSocket() ||
    entry.isBlockDevice() ||
    entry.isCharacterDevice()
  ) {
    return 'file';
  }
  const stats = lstatOrNull(beneathBytes(fd, entry.name));
  if (stats === null) return null;
  if (stats.isSymbolicLink()) return 'symlink';
  return stats.isDirectory() ? 'directory' : 'file';
}

export function lstatOrNull(path: Buffer): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}

export function isGone(error: unknown): boolean {
  const code = errnoOf(error);
  return code === 'ENOENT' || code === 'EACCES' || code === 'EPERM';
}
