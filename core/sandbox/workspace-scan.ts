import {
  type BigIntStats,
  closeSync,
  type Dirent,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  statSync,
} from 'node:fs';
import { isCredentialLikePath } from '../capture/credential-paths.js';
import {
  assertNoExcludedAncestor,
  DIRECTORY_FLAGS,
  errnoOf,
  FILE_FLAGS,
  type Identity,
  isExcluded,
  openWorkspaceRoot,
  WalkRefusal,
} from '../capture/descriptor-walk.js';
import { sameInode } from '../capture/file-state.js';
import { SANDBOX_SCAN_LIMITS } from './command-limits.js';

/** What a command may run in, and what must be covered in it. Crosses a thread boundary as it is. */
export interface ScanRequest {
  workspace: string;
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

/** The bounds of one walk: SANDBOX_SCAN_LIMITS, or smaller ones a test can reach quickly. */
export type ScanLimits = { readonly [bound in keyof typeof SANDBOX_SCAN_LIMITS]: number };

export interface ScanControl {
  limits?: ScanLimits;
  /** Asked before each folder is read: true ends the walk with a refusal, every descriptor closed. */
  stopped?: () => boolean;
}

export type ScanRefusalReason = 'workspace_unavailable' | 'workspace_not_allowed' | 'workspace_too_large';

export class ScanRefusal extends Error {
  readonly reason: ScanRefusalReason;

  constructor(reason: ScanRefusalReason) {
    super('the workspace cannot be prepared for a command');
    this.name = 'ScanRefusal';
    this.reason = reason;
  }
}

/** Names whose folder the sandbox binds read-only (compared lowercased, as the credential rules are). */
const GIT_NAME = '.git';
/** Files inside a `.git` folder that may carry tokens (remote URLs with credentials, credential helpers). */
const GIT_CONFIG_NAMES = new Set(['config', 'config.worktree']);

interface Walk {
  /** Every descriptor opened so far that is not closed on the way: the scan's, or closed if it is refused. */
  held: number[];
  limits: ScanLimits;
  stopped: () => boolean;
  rootPath: Buffer;
  hiddenDirectories: readonly Identity[];
  directories: number;
  entries: number;
  marks: Map<string, Mark>;
}

type Mark =
  | { kind: 'cover'; names: Buffer[]; cover: 'directory' | 'file' }
  | { kind: 'read_only'; names: Buffer[]; fd: number };

/**
 * Checks the workspace by descriptor and walks it for what a command must not see or change. The workspace
 * is opened following symlinks (the user chose it), then refused when it is the filesystem root, the
 * daemon's home or inside it, whatever path led there; everything beneath is opened without following a
 * symlink. The walk is bounded (SANDBOX_SCAN_LIMITS) and refuses a workspace past its bounds: a part left
 * unwalked could hold a secret. Runs synchronously, on a thread of its own (descriptor numbers must not be
 * reused between steps); every descriptor it returns is the caller's to close.
 */
export function scanWorkspace(request: ScanRequest, control: ScanControl = {}): WorkspaceScan {
  const { limits = SANDBOX_SCAN_LIMITS, stopped = () => false } = control;
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
    const walk: Walk = {
      held,
      limits,
      stopped,
      rootPath: realPathOf(rootFd),
      hiddenDirectories: [home, ...request.hiddenDirectories.map(identityOf)].filter(
        (identity): identity is Identity => identity !== null,
      ),
      directories: 0,
      entries: 0,
      marks: new Map(),
    };
    walkDirectory(walk, rootFd, [], 0, null);
    for (const path of request.hiddenPaths) markHiddenPath(walk, rootFd, path);
    const aboveCovers = gitConfigsAbove(rootFd, limits.depth_above);
    const marks = [...walk.marks.values()];
    const pins = pinsFor(walk, rootFd, marks);
    return {
      root: { fd: rootFd, path: walk.rootPath },
      pins,
      readOnly: marks
        .filter((mark) => mark.kind === 'read_only')
        .sort(outermostFirst)
        .map((mark) => ({ fd: mark.fd, path: sandboxPath(walk, mark.names) })),
      covers: [
        ...marks
          .filter((mark) => mark.kind === 'cover')
          .map((mark) => ({ path: sandboxPath(walk, mark.names), kind: mark.cover })),
        ...aboveCovers.map((path) => ({ path, kind: 'file' as const })),
      ],
      outside: [
        ...request.outsidePaths,
        ...socketCover(request.socket, walk.rootPath.toString('utf8')),
      ].flatMap((path) => {
        const stats = lstatOrNull(Buffer.from(path));
        if (stats === null || stats.isSymbolicLink()) return [];
        return [{ path, kind: stats.isDirectory() ? ('directory' as const) : ('file' as const) }];
      }),
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

function realPathOf(fd: number): Buffer {
  return readlinkSync(`/proc/self/fd/${fd}`, { encoding: 'buffer' });
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
      const gitFd = openBeneath(fd, Buffer.from(GIT_NAME), DIRECTORY_FLAGS);
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

function identityOf(path: string): Identity | null {
  try {
    const { dev, ino } = statSync(path, { bigint: true });
    return { dev, ino };
  } catch {
    return null;
  }
}

/** Reads one directory and goes down into each plain subdirectory; inside a `.git` folder only configs count. */
function walkDirectory(walk: Walk, fd: number, names: Buffer[], depth: number, git: GitPlace): void {
  if (walk.stopped()) throw new ScanRefusal('workspace_unavailable');
  walk.directories += 1;
  if (walk.directories > walk.limits.directories || depth > walk.limits.depth) {
    throw new ScanRefusal('workspace_too_large');
  }
  let entries: Dirent<Buffer>[];
  try {
    entries = readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true, encoding: 'buffer' });
  } catch (error) {
    // A folder the daemon cannot list, a command (with fewer rights) cannot list either.
    if (isGone(error)) return;
    throw error;
  }
  walk.entries += entries.length;
  if (walk.entries > walk.limits.entries) throw new ScanRefusal('workspace_too_large');
  for (const entry of entries) {
    const name = entry.name;
    const path = [...names, name];
    const type = entryType(fd, entry);
    if (type === null || type === 'symlink') continue;
    const lower = name.toString('latin1').toLowerCase();
    if (git !== null) {
      if (type === 'file' && GIT_CONFIG_NAMES.has(lower))
        mark(walk, { kind: 'cover', names: path, cover: 'file' });
      else if (type === 'directory' && gitFolderHoldsConfigs(git, lower))
        descend(walk, fd, path, depth, 'nested');
      continue;
    }
    if (lower === GIT_NAME) {
      const gitFd = openBeneath(fd, name, type === 'directory' ? DIRECTORY_FLAGS : FILE_FLAGS);
      if (gitFd === null) continue;
      mark(walk, { kind: 'read_only', names: path, fd: gitFd });
      if (type === 'directory') walkDirectory(walk, gitFd, path, depth + 1, 'top');
      continue;
    }
    // The folders above were checked on the way down, so the name and its parent are all a rule can match.
    if (isCredentialLikePath(path.slice(-2).map((component) => component.toString('latin1')))) {
      mark(walk, { kind: 'cover', names: path, cover: type === 'directory' ? 'directory' : 'file' });
      continue;
    }
    if (type === 'directory') descend(walk, fd, path, depth, null);
  }
}

function descend(walk: Walk, parentFd: number, names: Buffer[], depth: number, git: GitPlace): void {
  const childFd = openBeneath(parentFd, names[names.length - 1]!, DIRECTORY_FLAGS);
  if (childFd === null) return;
  try {
    const stats = fstatSync(childFd, { bigint: true });
    if (isExcluded(stats, walk.hiddenDirectories)) {
      mark(walk, { kind: 'cover', names, cover: 'directory' });
      return;
    }
    walkDirectory(walk, childFd, names, depth + 1, git);
  } finally {
    closeSync(childFd);
  }
}

/**
 * Where the walk is with respect to a `.git` folder: outside any (null), at its top, or in the repositories
 * it holds for submodules and worktrees, which have configs of their own.
 */
type GitPlace = null | 'top' | 'nested';

/** Inside a `.git` folder only `modules/` and `worktrees/` hold configs, and never an object store. */
function gitFolderHoldsConfigs(place: 'top' | 'nested', name: string): boolean {
  return place === 'top' ? name === 'modules' || name === 'worktrees' : name !== 'objects';
}

function keyOf(names: readonly Buffer[]): string {
  return Buffer.concat(names.flatMap((name) => [Buffer.from('/'), name])).toString('latin1');
}

function mark(walk: Walk, entry: Mark): void {
  const key = keyOf(entry.names);
  if (walk.marks.has(key)) {
    if (entry.kind === 'read_only') closeSync(entry.fd);
    return;
  }
  walk.marks.set(key, entry);
  if (entry.kind === 'read_only') walk.held.push(entry.fd);
  if (walk.marks.size > walk.limits.marks) throw new ScanRefusal('workspace_too_large');
}

/** A hidden path of the user's home that lies inside the workspace is covered when it exists there. */
function markHiddenPath(walk: Walk, rootFd: number, path: string): void {
  const root = walk.rootPath.toString('utf8');
  const prefix = root.endsWith('/') ? root : `${root}/`;
  if (!path.startsWith(prefix)) return;
  const names = path
    .slice(prefix.length)
    .split('/')
    .filter((name) => name !== '')
    .map((name) => Buffer.from(name, 'utf8'));
  if (names.length === 0) return;
  let fd = rootFd;
  try {
    for (const name of names.slice(0, -1)) {
      const next = openBeneath(fd, name, DIRECTORY_FLAGS);
      if (next === null) return;
      if (fd !== rootFd) closeSync(fd);
      fd = next;
    }
    const last = lstatOrNull(beneathBytes(fd, names[names.length - 1]!));
    if (last === null || last.isSymbolicLink()) return;
    mark(walk, { kind: 'cover', names, cover: last.isDirectory() ? 'directory' : 'file' });
  } finally {
    if (fd !== rootFd) closeSync(fd);
  }
}

/** Every folder above a mark, inside the workspace, opened without following a symlink; outermost first. */
function pinsFor(walk: Walk, rootFd: number, marks: readonly Mark[]): HeldPath[] {
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
  if (wanted.size + marks.length > walk.limits.marks) throw new ScanRefusal('workspace_too_large');
  const pins: HeldPath[] = [];
  for (const names of [...wanted.values()].sort((a, b) => a.length - b.length)) {
    const fd = openPath(rootFd, names);
    walk.held.push(fd);
    pins.push({ fd, path: sandboxPath(walk, names) });
  }
  return pins;
}

function openPath(rootFd: number, names: readonly Buffer[]): number {
  let fd = rootFd;
  try {
    for (const name of names) {
      const next = openBeneath(fd, name, DIRECTORY_FLAGS);
      // A folder that was there a moment ago and is gone or replaced: prepare nothing rather than half.
      if (next === null) throw new ScanRefusal('workspace_unavailable');
      if (fd !== rootFd) closeSync(fd);
      fd = next;
    }
    return fd;
  } catch (error) {
    if (fd !== rootFd) closeSync(fd);
    throw error;
  }
}

function outermostFirst(a: Mark, b: Mark): number {
  return a.names.length - b.names.length;
}

function sandboxPath(walk: Walk, names: readonly Buffer[]): SandboxPath {
  return Buffer.concat([walk.rootPath, ...names.flatMap((name) => [Buffer.from('/'), name])]);
}

function beneathBytes(fd: number, name: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`/proc/self/fd/${fd}/`), name]);
}

function openBeneath(fd: number, name: Buffer, flags: number): number | null {
  try {
    return openSync(beneathBytes(fd, name), flags);
  } catch (error) {
    // Gone, swapped for a symlink or something else since it was listed: there is nothing there to walk.
    if (isGone(error) || errnoOf(error) === 'ELOOP' || errnoOf(error) === 'ENOTDIR') return null;
    throw error;
  }
}

type EntryType = 'directory' | 'file' | 'symlink';

/** The entry's type from the listing, or from an lstat where the filesystem does not say. */
function entryType(fd: number, entry: Dirent<Buffer>): EntryType | null {
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

function lstatOrNull(path: Buffer): BigIntStats | null {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}

function isGone(error: unknown): boolean {
  const code = errnoOf(error);
  return code === 'ENOENT' || code === 'EACCES' || code === 'EPERM';
}
