import { realpath } from 'node:fs/promises';
import { delimiter, isAbsolute, join, relative, sep } from 'node:path';
import { isCredentialLikePath } from '../confinement/credential-rules.js';
import { homeCredentialPaths } from '../confinement/home-credential-paths.js';
import { resolveSystemCovers, type SystemCovers } from './system-covers.js';

/** The search path every command gets after the daemon's own visible entries. */
export const COMMAND_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Folders of the user's home that stay readable in commands when they exist: toolchains and their version
 * managers, and git's own configuration. Each is read-only inside; the home's credential files within them
 * stay covered.
 */
export const READABLE_HOME_PATHS: readonly string[] = [
  '.cargo',
  '.rustup',
  '.pyenv',
  '.rbenv',
  '.nodenv',
  '.goenv',
  '.nvm',
  '.volta',
  '.asdf',
  '.local/share/mise',
  '.local/bin',
  '.local/lib',
  'go',
  '.bun',
  '.deno',
  '.sdkman',
  '.ghcup',
  '.opam',
  '.gitconfig',
  '.config/git/config',
  '.config/git/ignore',
];

/** Places every command sees empty: the shared temporary and runtime folders, and the user's home. */
const EMPTIED_PLACES: readonly string[] = ['/tmp', '/var/tmp', '/run', '/var/run', '/dev/shm'];

export interface SandboxViewOptions {
  daemonHome: string;
  /** Where the daemon listens, or null (stdio). */
  socketPath: string | null;
  userHome: string | null;
  /** `XDG_RUNTIME_DIR`, where session buses and user sockets live. */
  runtimeDirectory: string | null;
  /** `tools.run_command.readable_paths`: absolute, or `~/…` for the user's home. */
  readablePaths: readonly string[];
  /** The daemon's own PATH. */
  searchPath: string;
}

export type SkippedReadableReason = 'missing' | 'credential_path' | 'daemon_home' | 'whole_home' | 'relative';

/** What every command of this daemon sees of the machine, resolved once at startup (real paths throughout). */
export interface SandboxView {
  daemonHome: string;
  socket: { directory: string; path: string } | null;
  userHome: string | null;
  /** Each a fresh empty tmpfs inside; outermost places only. */
  emptied: string[];
  /** Bound read-only at `path` from `source`, after the place that empties them. */
  readable: Array<{ source: string; path: string }>;
  /** The home's credential places, covered wherever a command could still reach them. */
  credentialPaths: string[];
  /** `PATH` inside: the daemon's entries a command can see, then the system's. */
  commandPath: string;
  /** Configured readable paths that were not made readable, and why. */
  skipped: Array<{ path: string; reason: SkippedReadableReason }>;
  /** What the machine keeps under /proc and /sys, and its own secrets, that commands must not reach. */
  system: SystemCovers;
}

export async function resolveSandboxView(options: SandboxViewOptions): Promise<SandboxView> {
  const daemonHome = (await realOrNull(options.daemonHome)) ?? options.daemonHome;
  const userHome = await realOrNull(options.userHome);
  const homePlace = userHome !== null && userHome !== sep ? [userHome] : [];
  const places = await Promise.all(
    [...EMPTIED_PLACES, options.runtimeDirectory, ...homePlace].map((place) => realOrNull(place)),
  );
  const emptied = outermost(places.filter((place): place is string => place !== null));
  const skipped: SandboxView['skipped'] = [];
  const readable: SandboxView['readable'] = [];
  const wanted = [
    ...(userHome === null
      ? []
      : READABLE_HOME_PATHS.map((path) => ({ given: path, path: join(userHome, path), configured: false }))),
    ...options.readablePaths.map((given) => ({ given, path: expandHome(given, userHome), configured: true })),
  ];
  for (const { given, path, configured } of wanted) {
    const reason = path === null ? 'relative' : await readableRefusal(path, daemonHome, userHome);
    if (reason === null) readable.push({ source: (await realpath(path!)) as string, path: path! });
    else if (configured) skipped.push({ path: path ?? given, reason });
  }
  const socket = await socketOf(options.socketPath);
  return {
    daemonHome,
    socket,
    userHome,
    emptied,
    readable: readable.filter(({ path }) => emptied.some((place) => isInside(path, place))),
    credentialPaths: userHome === null ? [] : homeCredentialPaths(userHome),
    commandPath: await commandPath(options.searchPath, emptied, readable, daemonHome),
    skipped,
    system: await resolveSystemCovers(),
  };
}

async function readableRefusal(
  path: string,
  daemonHome: string,
  userHome: string | null,
): Promise<SkippedReadableReason | null> {
  const real = await realOrNull(path);
  if (real === null) return 'missing';
  for (const candidate of [path, real]) {
    if (isInside(candidate, daemonHome) || isInside(daemonHome, candidate) || candidate === daemonHome) {
      return 'daemon_home';
    }
    if (userHome !== null && (candidate === userHome || isInside(userHome, candidate))) return 'whole_home';
    const beneath =
      userHome !== null && isInside(candidate, userHome) ? relative(userHome, candidate) : candidate;
    if (isCredentialLikePath(beneath.split(sep).filter(Boolean))) return 'credential_path';
  }
  return null;
}

function expandHome(path: string, userHome: string | null): string | null {
  if (path === '~' || path.startsWith('~/')) return userHome === null ? null : join(userHome, path.slice(1));
  return isAbsolute(path) ? path : null;
}

async function socketOf(socketPath: string | null): Promise<SandboxView['socket']> {
  if (socketPath === null) return null;
  const directory = await realOrNull(join(socketPath, '..'));
  if (directory === null) return null;
  return { directory, path: join(directory, socketPath.slice(socketPath.lastIndexOf('/') + 1)) };
}

/** The daemon's PATH entries that a command can see, in their order, then the system's own. */
async function commandPath(
  searchPath: string,
  emptied: readonly string[],
  readable: SandboxView['readable'],
  daemonHome: string,
): Promise<string> {
  const entries: string[] = [];
  for (const entry of searchPath.split(delimiter)) {
    if (!isAbsolute(entry) || entries.includes(entry)) continue;
    const real = await realOrNull(entry);
    if (real === null || real === daemonHome || isInside(real, daemonHome)) continue;
    const hidden = emptied.some((place) => real === place || isInside(real, place));
    const exposed = readable.some(({ source }) => real === source || isInside(real, source));
    if (!hidden || exposed) entries.push(entry);
  }
  for (const entry of COMMAND_PATH.split(delimiter)) if (!entries.includes(entry)) entries.push(entry);
  return entries.join(delimiter);
}

/** Whether `path` lies strictly inside `directory` (both absolute and normalized). */
export function isInside(path: string, directory: string): boolean {
  const prefix = directory.endsWith(sep) ? directory : directory + sep;
  return path.startsWith(prefix);
}

function outermost(places: readonly string[]): string[] {
  const unique = [...new Set(places)];
  return unique.filter((place) => !unique.some((other) => other !== place && isInside(place, other)));
}

async function realOrNull(path: string | null): Promise<string | null> {
  if (path === null || !isAbsolute(path)) return null;
  try {
    return await realpath(path);
  } catch {
    return null;
  }
}
