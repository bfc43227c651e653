import { type Dir, type Dirent, opendirSync } from 'node:fs';
import { refusalForErrno } from '../capture/descriptor-walk.js';

/** A directory's entries as raw names: a name that is not UTF-8 is still sorted and looked up by its bytes. */
export interface RawEntry {
  name: Buffer;
  /** Whether the directory's own record says it may be a directory (DT_DIR or DT_UNKNOWN). */
  mayBeDirectory: boolean;
}

/** Every entry of the held directory but `.` and `..`, in byte order. */
export function readEntries(directoryFd: number): RawEntry[] {
  let dir: Dir;
  try {
    dir = opendirSync(`/proc/self/fd/${directoryFd}`, { encoding: 'buffer' as BufferEncoding });
  } catch (error) {
    throw refusalForErrno(error, 'unreadable');
  }
  const entries: RawEntry[] = [];
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      const name = entry.name as unknown as Buffer;
      entries.push({ name, mayBeDirectory: entry.isDirectory() || isUnknownType(entry) });
    }
  } catch (error) {
    throw refusalForErrno(error, 'unreadable');
  } finally {
    dir.closeSync();
  }
  return entries.sort((a, b) => Buffer.compare(a.name, b.name));
}

function isUnknownType(entry: Dirent): boolean {
  return !(
    entry.isFile() ||
    entry.isDirectory() ||
    entry.isSymbolicLink() ||
    entry.isFIFO() ||
    entry.isSocket() ||
    entry.isBlockDevice() ||
    entry.isCharacterDevice()
  );
}

export function entryPath(directoryFd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${directoryFd}/`), name]);
}
