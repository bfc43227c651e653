import { readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { PrivateFileError, readTextFile, writePrivateFile } from './private-file.js';

/** The file, in `<home>/run`, where a serving daemon says where it listens. */
export const DAEMON_RECORD_FILE_NAME = 'daemon.json';

/** What `<home>/run/daemon.json` says: the serving daemon's pid, socket and instance. */
export interface DaemonRecord {
  pid: number;
  socket: string;
  instance_id: string;
  home_id: string;
}

export function daemonRecordPath(home: string): string {
  return join(home, 'run', DAEMON_RECORD_FILE_NAME);
}

/** Written (atomically, mode 0600) once the daemon listens, by the holder of the home's lock. */
export function writeDaemonRecord(home: string, record: DaemonRecord): Promise<void> {
  return writePrivateFile(daemonRecordPath(home), `${JSON.stringify(record)}\n`);
}

/**
 * Removed at stop, only while it still names this instance (a later daemon's record is left alone).
 * Synchronous: a stop with a thread still blocked on a slow filesystem has no free worker to wait for.
 */
export function removeDaemonRecord(home: string, instanceId: string): void {
  const path = daemonRecordPath(home);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return;
  }
  if (!text.includes(`"instance_id":${JSON.stringify(instanceId)}`)) return;
  try {
    unlinkSync(path);
  } catch (error) {
    throw new PrivateFileError('remove', error);
  }
}

/**
 * The record of a daemon that is still alive, else null: a missing, unreadable or malformed record, or one
 * whose pid is gone (a daemon killed before it could remove it), is only a hint that nobody serves. It is
 * never authority to remove or signal anything: the caller still checks the daemon at the socket.
 */
export async function readDaemonRecord(home: string): Promise<DaemonRecord | null> {
  let text: string | null;
  try {
    text = await readTextFile(daemonRecordPath(home));
  } catch {
    return null;
  }
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isDaemonRecord(parsed) || !isAlive(parsed.pid)) return null;
  return parsed;
}

function isDaemonRecord(value: unknown): value is DaemonRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(record.pid) &&
    (record.pid as number) > 0 &&
    typeof record.socket === 'string' &&
    record.socket.startsWith('/') &&
    typeof record.instance_id === 'string' &&
    typeof record.home_id === 'string'
  );
}

/** Whether a process `pid` exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
