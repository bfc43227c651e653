import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import {
  assertNoExcludedAncestor,
  DIRECTORY_FLAGS,
  FILE_FLAGS,
  type Identity,
  isExcluded,
  openWorkspaceRoot,
  WalkRefusal,
} from '../capture/descriptor-walk.js';
import { sameInode } from '../capture/file-state.js';
import { type ConfinedWorkspace, isPinnedFolder } from '../confinement/confined-workspace.js';
import { SANDBOX_SCAN_LIMITS } from './command-limits.js';
import type { ScanCache } from './scan-cache.js';
import {
  beneathBytes,
  identityOf,
  lstatOrNull,
  openBeneath,
  openFolderPath,
  openHeldPath,
  realPathOf,
} from './scan-entries.js';
import { ScanRefusal } from './scan-refusal.js';
import { type FolderRecord, GIT_CONFIG_NAMES, type ScanLimits, TreeWalk } from './scan-tree.js';

export { ScanRefusal, type ScanRefusalReason } from './scan-refusal.js';
export type { ScanLimits } from './scan-tree.js';

/** What a command may run in, and what must be covered in it. Crosses a thread boundary as it is. */
export interface ScanRequest {
  workspace: string;
  /** The pin the workspace must still match (a session's); null for a folder of the daemon's own (the probe). */
  pinned: ConfinedWorkspace | null;
  /** The daemon's home: a workspace that is it or lies inside it is refused; a folder that is it is covered. */
  daemonHome: string;
  /** Folders covered wherever the walk meets them, by identity (the socket's folder). */
  hiddenDirectories: string[];
  /** Absolute paths covered when they lie inside the workspace (the credential places of the user's home). */
  hiddenPaths: string[];
  /**
   * Absolute paths to cover wherever they are, when they exist now: the daemon's home, the credential files
   * of the readable folders.
   */
  outsidePaths: string[];
  /** Where the daemon listens: its folder is covered, or the socket alone when that folder holds the workspace. */
  socket: { directory: string; path: string } | null;
}

/** A path inside the workspace as the sandbox sees it (the workspace's real path, then the names), in bytes. */
export type SandboxPath = Uint8Array;

export interface HeldPath {
  /** A descriptor of the directory or file as the walk found it, for `bwrap --bind-fd`. */
  fd: number;
  path: SandboxPath;
}

export interface WorkspaceScan {
  /** The workspace, held open: it is bound by this descriptor, at its real path. */
  root: HeldPath;
  /**
   * Folders on the way to something bound or covered, outermost first. Each is bound onto itself, which
   * makes it a mount point inside every command, and a mount point cannot be renamed: no command can move
   * a covered file out from under its cover while another command is being set up.
   */
  pins: HeldPath[];
  /** `.git` folders and files, bound read-only, outermost first. */
  readOnly: HeldPath[];
  /** Credential-like files and folders, and the daemon's own folders: each covered by an empty one. */
  covers: Array<{ path: SandboxPath; kind: 'directory' | 'file' }>;
  /** Those of the request's outside paths (and the socket's cover) that exist, to cover in place. */
  outside: Array<{ path: string; kind: 'directory' | 'file' }>;
}

/** A scan's result, and what it cost: the folders of the workspace it knows of and how many it had to read. */
export interface ScannedWorkspace extends WorkspaceScan {
  folders: { known: number; read: number };
}

export interface ScanControl {
  limits?: ScanLimits;
  /** Asked before each folder is read: true ends the walk with a refusal, every descriptor closed. */
  stopped?: () => boolean;
  /** What earlier scans of the workspace learned; the scan reads only what changed since, and keeps what it found. */
  cache?: ScanCache;
  /** The wall-clock time in nanoseconds, which folders' ctimes are compared with (the real one by default). */
  now?: () => bigint;
}

type Mark =
  | { kind: 'cover'; names: Buffer[]; cover: 'directory' | 'file' }
  | { kind: 'read_only'; names: Buffer[]; type: 'directory' | 'file'; identity: Identity | null };

/** The wall clock as a filesystem stamps it: nanoseconds since the epoch (milliseconds suffice, rounded down). */
const wallClockNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/**
 * Checks the workspace by descriptor and walks it for what a command must not see or change. The workspace
 * is opened following symlinks (the user chose it), then refused when it is the filesystem root, the
 * daemon's home or inside it, whatever path led there; everything beneath is opened without following a
 * symlink. The walk is bounded (SANDBOX_SCAN_LIMITS) and refuses a workspace past its bounds: a part left
 * unwalked could hold a secret. With a cache, only the folders that changed since the last scan are read
 * again (scan-tree.ts). Runs synchronously, on a thread of its own (descriptor numbers must not be reused
 * between steps); every descriptor it returns is the caller's to close.
 */
export function scanWorkspace(request: ScanRequest, control: ScanControl = {}): ScannedWorkspace {
  const { limits = SANDBOX_SCAN_LIMITS, stopped = () => false, cache, now = wallClockNs } = control;
  const rootFd = openRoot(request.workspace);
  const held: number[] = [rootFd];
  try {
    const root = fstatSync(rootFd, { bigint: true });
    const home = identityOf(request.daemonHome);
    if (sameInode(root, statSync('/', { bigint: true }))) throw new ScanRefusal('workspace_not_allowed');
    if (home !== null) {
      if (isExcluded(root, [home])) throw new ScanRefusal('workspace_not_allowed');
      try {
        assertNoExcludedAncestor(rootFd, root, [home]);
      } catch (error) {
        throw error instanceof WalkRefusal ? new ScanRefusal('workspace_not_allowed') : error;
      }
    }
    if (request.pinned !== null && !isPinnedFolder(rootFd, request.pinned))
      throw new ScanRefusal('workspace_changed');
    const rootPath = realPathOf(rootFd);
    const hiddenDirectories = [home, ...request.hiddenDirectories.map(identityOf)].filter(
      (identity): identity is Identity => identity !== null,
    );
    const key = [
      root.dev,
      root.ino,
      rootPath.toString('hex'),
      ...hiddenDirectories.flatMap((h) => [h.dev, h.ino]),
    ].join(':');
    const previous = cache?.check(key, rootFd) ?? null;
    const walk = new TreeWalk({
      rootFd,
      limits,
      stopped,
      now,
      hiddenDirectories,
      changed: previous?.changed ?? new Uint32Array(0),
    });
    const tree = walk.walk(previous?.tree ?? null);
    const marks = new Map<string, Mark>();
    collectMarks(tree, [], marks);
    for (const path of request.hiddenPaths) markHiddenPath(marks, rootFd, rootPath, path);
    if (marks.size > limits.marks) throw new ScanRefusal('workspace_too_large');
    const aboveCovers = gitConfigsAbove(rootFd, limits.depth_above);
    const all = [...marks.values()];
    const pins = pinsFor(all, limits.marks).map((names) => {
      const fd = openHeldPath(rootFd, names);
      held.push(fd);
      return { fd, path: sandboxPath(rootPath, names) };
    });
    const readOnly = all
      .filter((mark) => mark.kind === 'read_only')
      .sort((a, b) => a.names.length - b.names.length)
      .flatMap((mark) => {
        const fd = openReadOnly(rootFd, mark);
        if (fd === null) return [];
        held.push(fd);
        return [{ fd, path: sandboxPath(rootPath, mark.names) }];
      });
    cache?.keep(key, tree);
    return {
      root: { fd: rootFd, path: rootPath },
      pins,
      readOnly,
      covers: [
        ...all.flatMap((mark) =>
          mark.kind === 'cover' ? [{ path: sandboxPath(rootPath, mark.names), kind: mark.cover }] : [],
        ),
        ...aboveCovers.map((path) => ({ path, kind: 'file' as const })),
      ],
      outside: [...request.outsidePaths, ...socketCover(request.socket, rootPath.toString('utf8'))].flatMap(
        (path) => {
          const stats = lstatOrNull(Buffer.from(path));
          if (stats === null || stats.isSymbolicLink()) return [];
          return [{ path, kind: stats.isDirectory() ? ('directory' as const) : ('file' as const) }];
        },
      ),
      folders: { known: tree.totals.folders, read: walk.read },
    };
  } catch (error) {
    for (const fd of held) closeSync(fd);
    throw error instanceof ScanRefusal ? error : new ScanRefusal('workspace_unavailable');
  }
}

function openRoot(workspace: string): number {
  try {
    return openWorkspaceRoot(workspace);
  } catch {
    throw new ScanRefusal('workspace_unavailable');
  }
}

function socketCover(socket: ScanRequest['socket'], workspace: string): string[] {
  if (socket === null) return [];
  const holdsWorkspace = workspace === socket.directory || workspace.startsWith(`${socket.directory}/`);
  return [holdsWorkspace ? socket.path : socket.directory];
}

function keyOf(names: readonly Buffer[]): string {
  return Buffer.concat(names.flatMap((name) => [Buffer.from('/'), name])).toString('latin1');
}

/**
 * Every mark of the tree by its path, skipping the subtrees that hold none. A folder that could not be listed
 * is covered whole, even a `.git` folder that would otherwise be bound read-only.
 */
function collectMarks(record: FolderRecord, names: Buffer[], marks: Map<string, Mark>): void {
  for (const child of record.children) {
    if (child.listed) continue;
    const path = [...names, child.name];
    if (!marks.has(keyOf(path))) marks.set(keyOf(path), { kind: 'cover', names: path, cover: 'directory' });
  }
  for (const mark of record.marks) {
    const path = [...names, mark.name];
    const key = keyOf(path);
    if (marks.has(key)) continue;
    if (mark.kind === 'cover') marks.set(key, { kind: 'cover', names: path, cover: mark.cover });
    else {
      const folder = record.children.find((child) => child.name.equals(mark.name));
      const identity = folder ? { dev: folder.dev, ino: folder.ino } : null;
      marks.set(key, { kind: 'read_only', names: path, type: mark.type, identity });
    }
  }
  for (const child of record.children) {
    if (child.listed && child.totals.marks > 0) collectMarks(child, [...names, child.name], marks);
  }
}

/**
 * Opens a `.git` folder or file to bind read-only, or null when it is gone. A folder must be the one whose
 * listing was checked: one swapped in since refuses the scan rather than binding what was not looked into.
 */
function openReadOnly(rootFd: number, mark: Extract<Mark, { kind: 'read_only' }>): number | null {
  const parentFd = openFolderPath(rootFd, mark.names.slice(0, -1));
  if (parentFd === null) return null;
  let fd: number | null;
  try {
    fd = openBeneath(
      parentFd,
      mark.names[mark.names.length - 1]!,
      mark.type === 'directory' ? DIRECTORY_FLAGS : FILE_FLAGS,
    );
  } finally {
    if (parentFd !== rootFd) closeSync(parentFd);
  }
  if (fd === null || mark.identity === null) return fd;
  if (!sameInode(fstatSync(fd, { bigint: true }), mark.identity)) {
    closeSync(fd);
    throw new ScanRefusal('workspace_unavailable');
  }
  return fd;
}

/** A hidden path of the user's home that lies inside the workspace is covered when it exists there. */
function markHiddenPath(marks: Map<string, Mark>, rootFd: number, rootPath: Buffer, path: string): void {
  const root = rootPath.toString('utf8');
  const prefix = root.endsWith('/') ? root : `${root}/`;
  if (!path.startsWith(prefix)) return;
  const names = path
    .slice(prefix.length)
    .split('/')
    .filter((name) => name !== '')
    .map((name) => Buffer.from(name, 'utf8'));
  if (names.length === 0) return;
  const fd = openFolderPath(rootFd, names.slice(0, -1));
  if (fd === null) return;
  try {
    const last = lstatOrNull(beneathBytes(fd, names[names.length - 1]!));
    if (last === null || last.isSymbolicLink()) return;
    const key = keyOf(names);
    if (!marks.has(key))
      marks.set(key, { kind: 'cover', names, cover: last.isDirectory() ? 'directory' : 'file' });
  } finally {
    if (fd !== rootFd) closeSync(fd);
  }
}

/** Every folder above a mark, inside the workspace, outermost first; at most `bound` with the marks. */
function pinsFor(marks: readonly Mark[], bound: number): Buffer[][] {
  // A read-only binding is a mount point already, and nothing inside it can be renamed.
  const readOnly = new Set(
    marks.filter((entry) => entry.kind === 'read_only').map((entry) => keyOf(entry.names)),
  );
  const wanted = new Map<string, Buffer[]>();
  for (const entry of marks) {
    for (let length = 1; length < entry.names.length; length += 1) {
      const names = entry.names.slice(0, length);
      const key = keyOf(names);
      if (readOnly.has(key)) break;
      wanted.set(key, names);
    }
  }
  if (wanted.size + marks.length > bound) throw new ScanRefusal('workspace_too_large');
  return [...wanted.values()].sort((a, b) => a.length - b.length);
}

function sandboxPath(rootPath: Buffer, names: readonly Buffer[]): SandboxPath {
  return Buffer.concat([rootPath, ...names.flatMap((name) => [Buffer.from('/'), name])]);
}

/**
 * The config files of the repositories the workspace lies in (a `.git` folder in a folder above it): outside
 * the workspace the root is read-only, so only what may carry a token is covered.
 */
function gitConfigsAbove(rootFd: number, depthAbove: number): Buffer[] {
  const found: Buffer[] = [];
  let fd = rootFd;
  try {
    for (let step = 0; step < depthAbove; step += 1) {
      const parentFd = openSync(`/proc/self/fd/${fd}/..`, DIRECTORY_FLAGS);
      if (fd !== rootFd) closeSync(fd);
      fd = parentFd;
      const gitFd = openBeneath(fd, Buffer.from('.git'), DIRECTORY_FLAGS);
      if (gitFd !== null) {
        try {
          for (const name of GIT_CONFIG_NAMES) {
            const stats = lstatOrNull(beneathBytes(gitFd, Buffer.from(name)));
            if (stats?.isFile()) found.push(Buffer.concat([realPathOf(gitFd), Buffer.from(`/${name}`)]));
          }
        } finally {
          closeSync(gitFd);
        }
      }
      const here = fstatSync(fd, { bigint: true });
      const up = statSync(`/proc/self/fd/${fd}/..`, { bigint: true });
      if (sameInode(here, up)) break;
    }
  } finally {
    if (fd !== rootFd) closeSync(fd);
  }
  return found;
}
