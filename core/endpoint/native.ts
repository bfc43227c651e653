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
  /**
   * Checks a tree of folders beneath `rootFd` against what was recorded of each (native/magi_native.c):
   * node i, in preorder, lies `depths[i]` levels down and is named by `names` from `ends[i - 1]` to `ends[i]`
   * (node 0 is the root); `expected` holds its device, inode and ctime in nanoseconds. Writes the index of
   * every node gone or not as recorded to `changed`, in increasing order, and returns their count.
   */
  statTree(
    rootFd: number,
    names: Buffer,
    ends: Uint32Array,
    depths: Uint8Array,
    expected: BigUint64Array,
    changed: Uint32Array,
  ): number;
}

/** What marks the addon's folder: its sources ship with the package, beside any prebuilt. */
const ADDON_MARKER = join('native', 'binding.gyp');

let addonPath: string | undefined;
let addon: MagiNative | undefined;

/** node-gyp-build's resolver: `native/build/Release` when built from source, else the prebuilt for this platform. */
interface GypBuild {
  resolve(directory: string): string;
}

/**
 * The addon's folder, found by walking up from this file, so the same lookup works from the TypeScript
 * sources (core/endpoint/), the compiled tree (dist/core/endpoint/) and an installed package.
 */
function nativeAddonDirectory(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(directory, ADDON_MARKER))) return join(directory, 'native');
    const parent = dirname(directory);
    if (parent === directory) throw new EndpointError('native_addon_missing');
    directory = parent;
  }
}

/**
 * The absolute path of the addon this process loads: the one compiled into native/build/Release when there
 * is one (a checkout, or an install that compiled it), else native/prebuilds/<platform>-<arch>/.
 */
export function nativeAddonPath(): string {
  if (addonPath !== undefined) return addonPath;
  const gypBuild = createRequire(import.meta.url)('node-gyp-build') as GypBuild;
  try {
    addonPath = gypBuild.resolve(nativeAddonDirectory());
  } catch {
    // node-gyp-build's own message names the folder and the platform: keep to the fixed one.
    throw new EndpointError('native_addon_missing');
  }
  return addonPath;
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
    typeof value.closeOnExec === 'function' &&
    'statTree' in value &&
    typeof value.statTree === 'function'
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
