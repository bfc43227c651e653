import { nativeAddon } from '../endpoint/native.js';
import type { FolderRecord } from './scan-tree.js';

/** The batched check of a tree of folders: the native addon's statTree (core/endpoint/native.ts). */
export type StatTree = (
  rootFd: number,
  names: Buffer,
  ends: Uint32Array,
  depths: Uint8Array,
  expected: BigUint64Array,
  changed: Uint32Array,
) => number;

/** A ctime no folder has: a listing that is not trusted is always found changed. */
const NEVER = 2n ** 64n - 1n;

/** A tree laid out for statTree, in preorder. */
interface CheckedTree {
  names: Buffer;
  ends: Uint32Array;
  depths: Uint8Array;
  expected: BigUint64Array;
  changed: Uint32Array;
}

/**
 * What the scans of one workspace learned, kept between them on the scan thread: the tree of its folders as
 * the last scan left it, for one workspace identity (its root's device, inode and real path, and the
 * identities of the folders it covers wherever they are). Before a scan, one native call checks every folder
 * of that tree against its record; the walk then reads only what changed (scan-tree.ts).
 */
export class ScanCache {
  readonly #statTree: StatTree;
  #key: string | null = null;
  #tree: FolderRecord | null = null;
  #checked: CheckedTree | null = null;

  constructor(statTree: StatTree = (...args) => nativeAddon().statTree(...args)) {
    this.#statTree = statTree;
  }

  /**
   * The tree kept for `key` and the preorder indexes of its folders not as recorded now (increasing), or null
   * when none is kept for it.
   */
  check(key: string, rootFd: number): { tree: FolderRecord; changed: Uint32Array } | null {
    if (this.#key !== key || this.#tree === null || this.#checked === null) {
      this.forget();
      return null;
    }
    const { names, ends, depths, expected, changed } = this.#checked;
    const count = this.#statTree(rootFd, names, ends, depths, expected, changed);
    return { tree: this.#tree, changed: changed.subarray(0, count) };
  }

  /** Keeps the tree a scan of `key` ended with. */
  keep(key: string, tree: FolderRecord): void {
    if (this.#key === key && this.#tree === tree) return;
    this.#key = key;
    this.#tree = tree;
    this.#checked = layOut(tree);
  }

  forget(): void {
    this.#key = null;
    this.#tree = null;
    this.#checked = null;
  }
}

/** Numbers the records in preorder (their `place`) and lays the tree out for statTree. */
function layOut(root: FolderRecord): CheckedTree {
  const count = root.totals.folders;
  const names: Buffer[] = [];
  const ends = new Uint32Array(count);
  const depths = new Uint8Array(count);
  const expected = new BigUint64Array(3 * count);
  let index = 0;
  let end = 0;
  const visit = (record: FolderRecord, depth: number): void => {
    const at = index;
    index += 1;
    names.push(record.name);
    end += record.name.length;
    ends[at] = end;
    depths[at] = depth;
    expected[3 * at] = record.dev;
    expected[3 * at + 1] = record.ino;
    expected[3 * at + 2] = record.stamp ?? NEVER;
    for (const child of record.children) visit(child, depth + 1);
    record.place = { index: at, end: index };
  };
  visit(root, 0);
  return { names: Buffer.concat(names, end), ends, depths, expected, changed: new Uint32Array(count) };
}
