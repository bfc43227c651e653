import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EndpointError } from './endpoint-error.js';

export interface PeerCredentials {
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
}

/** The native addon built from native/magi_native.c. Errors carry the errno name in `.code`. */
export interface MagiNative {
  /** getsockopt(SO_PEERCRED) on a connected Unix socket. */
  peerCredentials(fd: number): PeerCredentials;
  /** flock(2); false when another open file description holds a conflicting lock (EWOULDBLOCK). */
  flock(fd: number, exclusive: boolean, nonBlocking: boolean): boolean;
  /** _exit(2): ends the process without joining its threads (one may be blocked in the kernel). */
  exitNow(code: number): never;
  /** prlimit(2): sets the soft and hard limit of one resource of process `pid` to `bytes`. */
  limitProcess(pid: number, resource: 'core' | 'fsize' | 'data', bytes: number): void;
  /** Sets FD_CLOEXEC on `fd`. */
  closeOnExec(fd: number): void;
}

const ADDON_RELATIVE_PATH = join('native', 'build', 'Release', 'magi_native.node');

let addonPath: string | undefined;
let addon: MagiNative | undefined;

/**
 * The addon's absolute path, found by walking up from this file, so the same lookup works from the
 * TypeScript sources (core/endpoint/) and from the compiled tree (dist/core/endpoint/).
 */
export function nativeAddonPath(): string {
  if (addonPath !== undefined) return addonPath;
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(directory, ADDON_RELATIVE_PATH);
    if (existsSync(candidate)) {
      addonPath = candidate;
      return candidate;
    }
    const parent = dirname(directory);
    if (parent === directory) throw new EndpointError('native_addon_missing');
    directory = parent;
  }
}

function isMagiNative(value: unknown): value is MagiNative {
  return (
    typeof value === 'object' &&
    value !== null &&
    'peerCredentials' in value &&
    typeof value.peerCredentials === 'function' &&
    'flock' in value &&
    typeof value.flock === 'function' &&
    'exitNow' in value &&
    typeof value.exitNow === 'function' &&
    'limitProcess' in value &&
    typeof value.limitProcess === 'function' &&
    'closeOnExec' in value &&
    typeof value.closeOnExec === 'function'
  );
}

/** Loads the addon on first use, so modules that never need it can be imported without it. */
export function nativeAddon(): MagiNative {
  if (addon !== undefined) return addon;
  const loaded: unknown = createRequire(import.meta.url)(nativeAddonPath());
  if (!isMagiNative(loaded)) throw new EndpointError('native_addon_invalid');
  addon = loaded;
  return loaded;
}
