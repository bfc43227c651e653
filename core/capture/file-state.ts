import type { BigIntStats } from 'node:fs';

/** The fields of a file's status that a capture compares: identity, link count, size, times and type/mode. */
export type FileState = Pick<BigIntStats, 'dev' | 'ino' | 'nlink' | 'size' | 'mtimeNs' | 'ctimeNs' | 'mode'>;

const COMPARED_FIELDS = ['dev', 'ino', 'nlink', 'size', 'mtimeNs', 'ctimeNs', 'mode'] as const;

/** True when nothing the capture compares differs; any difference means the file changed or was replaced. */
export function sameFileState(a: FileState, b: FileState): boolean {
  return COMPARED_FIELDS.every((field) => a[field] === b[field]);
}

/** The same inode on the same device (bind mounts of one directory share both). */
export function sameInode(a: Pick<FileState, 'dev' | 'ino'>, b: Pick<FileState, 'dev' | 'ino'>): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}
