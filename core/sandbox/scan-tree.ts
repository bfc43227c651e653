import { type BigIntStats, closeSync, type Dirent, fstatSync, readdirSync, statfsSync } from 'node:fs';
import { type Identity, isExcluded } from '../capture/descriptor-walk.js';
import { isCredentialLikePath } from '../confinement/credential-rules.js';
import type { SANDBOX_SCAN_LIMITS } from './command-limits.js';
import {
  beneathBytes,
  entryType,
  isGone,
  lstatOrNull,
  openFolderBeneath,
  openFolderPath,
} from './scan-entries.js';
import { ScanRefusal } from './scan-refusal.js';

/** The bounds of one walk: SANDBOX_SCAN_LIMITS, or smaller ones a test can reach quickly. */
export type ScanLimits = { readonly [bound in keyof typeof SANDBOX_SCAN_LIMITS]: number };

/**
 * Where a folder lies with respect to a `.git` folder: outside any (null), at its top, or in the repositories
 * it holds for submodules and worktrees, which have configs of their own.
 */
export type GitPlace = null | 'top' | 'nested';

/** What a folder's listing holds that the sandbox covers or binds read-only, by name in that folder. */
export type FolderMark =
  | { kind: 'cover'; name: Buffer; cover: 'directory' | 'file' }
  | { kind: 'read_only'; name: Buffer; type: 'directory' | 'file' };

/** A subtree's sums, its own folder included: what the walk's bounds count. */
export interface SubtreeTotals {
  folders: number;
  entries: number;
  marks: number;
  /** Levels of folders below its own. */
  height: number;
}

/**
 * What one walk learned of one folder: its identity, the ctime its listing was read under, and what that
 * listing held. A record is never changed once made, so a walk that fails leaves the tree it started from as
 * it was; only `place` is set again each time a tree is checked (scan-cache.ts).
 */
export interface FolderRecord {
  readonly name: Buffer;
  readonly git: GitPlace;
  readonly dev: bigint;
  readonly ino: bigint;
  /**
   * The ctime the listing was read under, or null when the listing may not be trusted to be current however
   * that ctime looks later: the folder changed too shortly before it was read (a change within the
   * timestamp's granularity after the read would leave the ctime as it was), or its filesystem's timestamps
   * are not trusted.
   */
  readonly stamp: bigint | null;
  readonly entries: number;
  /**
   * False when the folder could not be listed: it is covered whole, since a command of the same user could
   * make it listable again and read what no walk has seen.
   */
  readonly listed: boolean;
  readonly marks: readonly FolderMark[];
  /** The folders walked into, in listing order. */
  readonly children: readonly FolderRecord[];
  readonly totals: SubtreeTotals;
  /** Its index in the preorder of the last check of its tree, and the index just past its subtree. */
  place: { index: number; end: number };
}

export interface TreeWalkOptions {
  rootFd: number;
  limits: ScanLimits;
  /** Asked before each folder is read: true ends the walk with a refusal. */
  stopped: () => boolean;
  /** The wall-clock time in nanoseconds, the clock the kernel stamps ctimes from. */
  now: () => bigint;
  /** Folders covered wherever the walk meets them, by identity. */
  hiddenDirectories: readonly Identity[];
  /** The preorder indexes of the previous tree's folders that are not as recorded, increasing. */
  changed: Uint32Array;
}

/** Names whose folder the sandbox binds read-only (compared lowercased, as the credential rules are). */
const GIT_NAME = '.git';
/** Files inside a `.git` folder that may carry tokens (remote URLs with credentials, credential helpers). */
export const GIT_CONFIG_NAMES = new Set(['config', 'config.worktree']);

/**
 * Filesystems whose ctimes a listing is trusted by (statfs(2) magic numbers): ext2/3/4, XFS, Btrfs, tmpfs,
 * overlayfs, F2FS, ZFS and bcachefs stamp every change of a folder's entries from the local clock. A network
 * or FUSE filesystem, or one that keeps creation times in ctime, has every folder read again each time.
 */
const TRUSTED_FILESYSTEMS = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0xf2f52010, 0x2fc12fc1, 0xca451a4e,
]);
/**
 * How long before its read a folder must have last changed for its listing to be trusted: the kernel stamps
 * a change from a clock that may lag the wall clock by a tick (10 ms at most), so a change made just after the
 * read could carry the very ctime seen by it. A ctime of whole seconds is taken for a filesystem that keeps
 * only seconds (or two).
 */
const RACY_MARGIN_NS = 50_000_000n;
const NO_RECORDS: ReadonlyMap<string, FolderRecord> = new Map();
const COARSE_MARGIN_NS = 2_000_000_000n;

/**
 * One walk of a workspace for what a command must not see, reading again only the folders that changed since
 * the previous tree was made (a folder whose entries change gets a new ctime, which no command can set back),
 * and every folder whose listing was not trusted. A folder renamed or replaced is a new name or a new
 * identity, so it is read again with everything below it. Runs synchronously on a scan thread.
 */
export class TreeWalk {
  /** Folders whose listing this walk read. */
  read = 0;
  #folders = 0;
  #entries = 0;
  #marks = 0;
  readonly #options: TreeWalkOptions;
  readonly #trustedDevices = new Map<bigint, boolean>();

  constructor(options: TreeWalkOptions) {
    this.#options = options;
  }

  /** The tree as it is now, `previous`'s records kept wherever they still hold. */
  walk(previous: FolderRecord | null): FolderRecord {
    const { rootFd } = this.#options;
    const root = this.#visit([], 0, null, previous, this.#holds(previous), rootFd);
    if (root === null) throw new ScanRefusal('workspace_unavailable');
    return root;
  }

  /** Whether the check found `record` as it was recorded, with a listing that may be trusted. */
  #holds(record: FolderRecord | null): record is FolderRecord {
    return (
      record !== null &&
      record.stamp !== null &&
      record.place.index >= 0 &&
      this.#firstChangeFrom(record.place.index) !== record.place.index
    );
  }

  /** The first changed index at or after `index`, or Infinity. */
  #firstChangeFrom(index: number): number {
    const { changed } = this.#options;
    let low = 0;
    let high = changed.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (changed[middle]! < index) low = middle + 1;
      else high = middle;
    }
    return low < changed.length ? changed[low]! : Number.POSITIVE_INFINITY;
  }

  /**
   * The record of the folder at `names`: `previous` as it is when its listing holds (`listed`) and nothing
   * below it changed, a copy with new records below when something did, else a fresh read. `fd` is the
   * folder's when the caller holds it open; null when it is gone.
   */
  #visit(
    names: Buffer[],
    depth: number,
    git: GitPlace,
    previous: FolderRecord | null,
    listed: boolean,
    fd: number | null,
  ): FolderRecord | null {
    if (previous !== null && listed) return this.#reuse(names, depth, previous);
    if (fd !== null) return this.#read(fd, names, depth, git, previous);
    const { rootFd } = this.#options;
    const parentFd = openFolderPath(rootFd, names.slice(0, -1));
    if (parentFd === null) return null;
    try {
      const own = openFolderBeneath(parentFd, names[names.length - 1]!);
      if (own === null) return null;
      if (own === 'denied') return this.#unlisted(parentFd, names, depth, git);
      try {
        return this.#read(own, names, depth, git, previous);
      } finally {
        closeSync(own);
      }
    } finally {
      if (parentFd !== rootFd) closeSync(parentFd);
    }
  }

  /** The record of a folder the daemon may not open: covered whole, and looked at again at every scan. */
  #unlisted(parentFd: number, names: Buffer[], depth: number, git: GitPlace): FolderRecord | null {
    if (this.#options.stopped()) throw new ScanRefusal('workspace_unavailable');
    const name = names[names.length - 1]!;
    const stats = lstatOrNull(beneathBytes(parentFd, name));
    if (stats === null || !stats.isDirectory()) return null;
    this.#count(depth, { folders: 1, entries: 0, marks: 1, height: 0 });
    this.read += 1;
    return makeRecord({ name, git, dev: stats.dev, ino: stats.ino }, null, 0, [], [], false);
  }

  #reuse(names: Buffer[], depth: number, record: FolderRecord): FolderRecord {
    if (this.#firstChangeFrom(record.place.index) >= record.place.end) {
      this.#count(depth, record.totals);
      return record;
    }
    this.#count(depth, { folders: 1, entries: record.entries, marks: record.marks.length, height: 0 });
    const children: FolderRecord[] = [];
    for (const child of record.children) {
      const next = this.#visit([...names, child.name], depth + 1, child.git, child, this.#holds(child), null);
      if (next !== null) children.push(next);
    }
    return makeRecord(record, record.stamp, record.entries, record.marks, children, record.listed);
  }

  #read(
    fd: number,
    names: Buffer[],
    depth: number,
    git: GitPlace,
    previous: FolderRecord | null,
  ): FolderRecord {
    if (this.#options.stopped()) throw new ScanRefusal('workspace_unavailable');
    this.#count(depth, { folders: 1, entries: 0, marks: 0, height: 0 });
    const readAt = this.#options.now();
    const stats = fstatSync(fd, { bigint: true });
    this.read += 1;
    let listing: Dirent<Buffer>[];
    let listed = true;
    try {
      listing = readdirSync(`/proc/self/fd/${fd}`, { withFileTypes: true, encoding: 'buffer' });
    } catch (error) {
      if (!isGone(error)) throw error;
      // A workspace the daemon cannot list cannot be checked; a folder inside it is covered whole.
      if (names.length === 0) throw new ScanRefusal('workspace_unavailable');
      listing = [];
      listed = false;
    }
    this.#count(depth, { folders: 0, entries: listing.length, marks: listed ? 0 : 1, height: 0 });
    const before: ReadonlyMap<string, FolderRecord> = previous
      ? new Map(previous.children.map((child) => [child.name.toString('latin1'), child]))
      : NO_RECORDS;
    const marks: FolderMark[] = [];
    const children: FolderRecord[] = [];
    const descend = (name: Buffer, place: GitPlace) =>
      this.#descend({ fd, names, depth, before, marks, children }, name, place);
    for (const entry of listing) {
      const name = entry.name;
      const type = entryType(fd, entry);
      if (type === null || type === 'symlink') continue;
      const lower = name.toString('latin1').toLowerCase();
      if (git !== null) {
        if (type === 'file' && GIT_CONFIG_NAMES.has(lower))
          this.#mark(marks, { kind: 'cover', name, cover: 'file' });
        else if (type === 'directory' && gitFolderHoldsConfigs(git, lower)) descend(name, 'nested');
        continue;
      }
      if (lower === GIT_NAME) {
        if (type === 'file' || descend(name, 'top') === 'walked')
          this.#mark(marks, { kind: 'read_only', name, type });
        continue;
      }
      // The folders above were checked on the way down, so the name and its parent are all a rule can match.
      const parent = names.length > 0 ? [names[names.length - 1]!.toString('latin1')] : [];
      if (isCredentialLikePath([...parent, name.toString('latin1')])) {
        this.#mark(marks, { kind: 'cover', name, cover: type });
        continue;
      }
      if (type === 'directory') descend(name, null);
    }
    const trusted = listed && this.#trusts(fd, stats) && stats.ctimeNs + marginOf(stats) < readAt;
    return makeRecord(
      { name: names[names.length - 1] ?? Buffer.alloc(0), git, dev: stats.dev, ino: stats.ino },
      trusted ? stats.ctimeNs : null,
      listing.length,
      marks,
      children,
      listed,
    );
  }

  /** Walks into the subfolder `name` of a folder being read, keeping its previous record when it still holds. */
  #descend(
    parent: {
      fd: number;
      names: Buffer[];
      depth: number;
      before: ReadonlyMap<string, FolderRecord>;
      marks: FolderMark[];
      children: FolderRecord[];
    },
    name: Buffer,
    git: GitPlace,
  ): 'walked' | 'covered' | 'gone' {
    const fd = openFolderBeneath(parent.fd, name);
    if (fd === null) return 'gone';
    if (fd === 'denied') {
      const child = this.#unlisted(parent.fd, [...parent.names, name], parent.depth + 1, git);
      if (child === null) return 'gone';
      parent.children.push(child);
      return 'walked';
    }
    try {
      const stats = fstatSync(fd, { bigint: true });
      if (isExcluded(stats, this.#options.hiddenDirectories)) {
        this.#mark(parent.marks, { kind: 'cover', name, cover: 'directory' });
        return 'covered';
      }
      const previous = parent.before.get(name.toString('latin1')) ?? null;
      // Checked again through the descriptor just opened: the folder may have been swapped since the check.
      const listed =
        previous !== null &&
        previous.git === git &&
        this.#holds(previous) &&
        previous.dev === stats.dev &&
        previous.ino === stats.ino &&
        previous.stamp === stats.ctimeNs;
      const child = this.#visit([...parent.names, name], parent.depth + 1, git, previous, listed, fd);
      if (child === null) return 'gone';
      parent.children.push(child);
      return 'walked';
    } finally {
      closeSync(fd);
    }
  }

  #mark(marks: FolderMark[], mark: FolderMark): void {
    marks.push(mark);
    this.#count(0, { folders: 0, entries: 0, marks: 1, height: 0 });
  }

  #count(depth: number, totals: SubtreeTotals): void {
    const { limits } = this.#options;
    this.#folders += totals.folders;
    this.#entries += totals.entries;
    this.#marks += totals.marks;
    if (
      this.#folders > limits.directories ||
      this.#entries > limits.entries ||
      this.#marks > limits.marks ||
      depth + totals.height > limits.depth
    ) {
      throw new ScanRefusal('workspace_too_large');
    }
  }

  #trusts(fd: number, stats: BigIntStats): boolean {
    let trusted = this.#trustedDevices.get(stats.dev);
    if (trusted === undefined) {
      try {
        trusted = TRUSTED_FILESYSTEMS.has(statfsSync(`/proc/self/fd/${fd}`).type);
      } catch {
        trusted = false;
      }
      this.#trustedDevices.set(stats.dev, trusted);
    }
    return trusted;
  }
}

function marginOf(stats: BigIntStats): bigint {
  return stats.ctimeNs % 1_000_000_000n === 0n ? COARSE_MARGIN_NS : RACY_MARGIN_NS;
}

/** Inside a `.git` folder only `modules/` and `worktrees/` hold configs, and never an object store. */
function gitFolderHoldsConfigs(place: 'top' | 'nested', name: string): boolean {
  return place === 'top' ? name === 'modules' || name === 'worktrees' : name !== 'objects';
}

function makeRecord(
  folder: Pick<FolderRecord, 'name' | 'git' | 'dev' | 'ino'>,
  stamp: bigint | null,
  entries: number,
  marks: readonly FolderMark[],
  children: readonly FolderRecord[],
  listed: boolean,
): FolderRecord {
  const totals: SubtreeTotals = { folders: 1, entries, marks: marks.length + (listed ? 0 : 1), height: 0 };
  for (const child of children) {
    totals.folders += child.totals.folders;
    totals.entries += child.totals.entries;
    totals.marks += child.totals.marks;
    totals.height = Math.max(totals.height, child.totals.height + 1);
  }
  const { name, git, dev, ino } = folder;
  return {
    name,
    git,
    dev,
    ino,
    stamp,
    entries,
    listed,
    marks,
    children,
    totals,
    place: { index: -1, end: -1 },
  };
}
