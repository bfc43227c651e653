import { readFileSync } from 'node:fs';
import { SERVICE_LIMITS } from '../limits.js';

/**
 * Descriptors kept for the daemon's own files beside its connections: Node's own (stdio, epoll,
 * worker pipes), the state database, the lock files, the listening socket, capture reads.
 */
export const DESCRIPTOR_RESERVE = 64;

const PROC_LIMITS = '/proc/self/limits';

/**
 * The soft open-files limit (RLIMIT_NOFILE) this process runs under. Node raises the soft limit to
 * the hard one at startup, so this is as many descriptors as the daemon can have. Null when it is
 * unlimited or cannot be read (no /proc): either way it sets no bound the daemon can act on.
 */
export function openFilesLimit(readLimits = () => readFileSync(PROC_LIMITS, 'utf8')): number | null {
  try {
    return parseOpenFilesLimit(readLimits());
  } catch {
    return null;
  }
}

/** The soft limit of the "Max open files" row of a /proc/<pid>/limits text. */
export function parseOpenFilesLimit(text: string): number | null {
  const soft = /^Max open files +(\d+) /m.exec(text)?.[1];
  if (soft === undefined) return null;
  const limit = Number(soft);
  return Number.isSafeInteger(limit) ? limit : null;
}

export interface ConnectionCapacity {
  /** Connections served at once. */
  connections: number;
  openFilesLimit: number | null;
  /** Descriptors the wire's own bound needs: every connection plus the reserve. */
  openFilesWanted: number;
  /** True when the open-files limit, not the wire's own bound, sets `connections`. */
  narrowed: boolean;
}

/**
 * How many connections the daemon can serve at once: the wire's own bound, or fewer when the
 * open-files limit leaves less than that beside the reserve. A connection refused with a frame is
 * better than one lost to EMFILE; at least one is always served.
 */
export function connectionCapacity(openFiles: number | null): ConnectionCapacity {
  const bound = SERVICE_LIMITS.connections;
  const connections =
    openFiles === null ? bound : Math.max(1, Math.min(bound, openFiles - DESCRIPTOR_RESERVE));
  return {
    connections,
    openFilesLimit: openFiles,
    openFilesWanted: bound + DESCRIPTOR_RESERVE,
    narrowed: connections < bound,
  };
}
