import {
  closeSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import t, { type Test } from 'tap';
import { nativeAddon, nativeAddonPath } from '../../../core/endpoint/native.js';

/** A tree of folders as statTree takes it: preorder paths relative to the root, the root first as ''. */
interface Tree {
  root: string;
  rootFd: number;
  paths: string[];
}

function makeTree(t: Test, paths: string[]): Tree {
  const root = mkdtempSync(join(tmpdir(), 'magi-stat-tree-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const path of paths) mkdirSync(join(root, path), { recursive: true });
  const rootFd = openSync(root, 'r');
  t.teardown(() => closeSync(rootFd));
  return { root, rootFd, paths: ['', ...paths] };
}

/** The arrays of the tree as it is now on disk. */
function record(tree: Tree) {
  const names: Buffer[] = [];
  const ends = new Uint32Array(tree.paths.length);
  const depths = new Uint8Array(tree.paths.length);
  const expected = new BigUint64Array(3 * tree.paths.length);
  let end = 0;
  tree.paths.forEach((path, index) => {
    const parts = path === '' ? [] : path.split('/');
    const name = Buffer.from(parts.at(-1) ?? '');
    names.push(name);
    end += name.length;
    ends[index] = end;
    depths[index] = parts.length;
    const fd = openSync(join(tree.root, path), 'r');
    const stats = fstatSync(fd, { bigint: true });
    closeSync(fd);
    expected.set([stats.dev, stats.ino, stats.ctimeNs], 3 * index);
  });
  return { names: Buffer.concat(names), ends, depths, expected };
}

function changedOf(tree: Tree, arrays: ReturnType<typeof record>): string[] {
  const changed = new Uint32Array(tree.paths.length);
  const count = nativeAddon().statTree(
    tree.rootFd,
    arrays.names,
    arrays.ends,
    arrays.depths,
    arrays.expected,
    changed,
  );
  return [...changed.subarray(0, count)].map((index) => tree.paths[index]!);
}

const PATHS = ['a', 'a/b', 'a/b/c', 'a/b/c/d', 'a/e', 'f', 'f/g'];

t.test('a tree as it was recorded has nothing changed', async (t) => {
  const tree = makeTree(t, PATHS);
  t.same(changedOf(tree, record(tree)), []);
});

t.test('a folder whose entries changed is reported, deep down or at the root', async (t) => {
  const tree = makeTree(t, PATHS);
  const arrays = record(tree);
  writeFileSync(join(tree.root, 'a/b/c/d/new'), '');
  writeFileSync(join(tree.root, 'new'), '');
  t.same(changedOf(tree, arrays), ['', 'a/b/c/d'], 'only the two folders whose entries changed');
});

t.test(
  'a folder renamed, or replaced by a symlink or a file, is reported with what lies below it',
  async (t) => {
    const tree = makeTree(t, PATHS);
    const arrays = record(tree);
    renameSync(join(tree.root, 'a/b'), join(tree.root, 'a/moved'));
    symlinkSync(join(tree.root, 'a/moved'), join(tree.root, 'a/b'));
    rmSync(join(tree.root, 'f/g'), { recursive: true });
    writeFileSync(join(tree.root, 'f/g'), '');
    t.same(
      changedOf(tree, arrays),
      ['a', 'a/b', 'a/b/c', 'a/b/c/d', 'f', 'f/g'],
      'the symlink is not followed to the folder it names',
    );
  },
);

t.test('a folder replaced by another of the same name is reported', async (t) => {
  const tree = makeTree(t, PATHS);
  const arrays = record(tree);
  const replaced = [...arrays.expected];
  rmSync(join(tree.root, 'a/e'), { recursive: true });
  mkdirSync(join(tree.root, 'a/e'));
  t.same(changedOf(tree, arrays), ['a', 'a/e']);
  // The parent as it is now, the folder as it was: its own record alone tells the new one apart.
  const now = record(tree);
  now.expected.set(replaced.slice(3 * 5, 3 * 6), 3 * 5);
  t.same(changedOf(tree, now), ['a/e']);
});

t.test('arrays that do not describe one tree are refused before any system call', async (t) => {
  const tree = makeTree(t, ['a']);
  const good = record(tree);
  const { statTree } = nativeAddon();
  const changed = new Uint32Array(2);
  const call =
    (overrides: Partial<typeof good>, into = changed) =>
    () => {
      const arrays = { ...good, ...overrides };
      statTree(tree.rootFd, arrays.names, arrays.ends, arrays.depths, arrays.expected, into);
    };
  t.throws(call({ depths: new Uint8Array([0, 2]) }), RangeError, 'a node two levels below its parent');
  t.throws(call({ depths: new Uint8Array([1, 1]) }), RangeError, 'a root that is not at depth 0');
  t.throws(call({ ends: new Uint32Array([0, 5]) }), RangeError, 'a name past the end of the names');
  t.throws(call({ ends: new Uint32Array([0, 0]) }), RangeError, 'an empty name');
  t.throws(call({ names: Buffer.from('/') }), RangeError, 'a name with a slash');
  t.throws(call({ names: Buffer.from('\0') }), RangeError, 'a name with a NUL');
  t.throws(call({ expected: new BigUint64Array(3) }), RangeError, 'too few expectations');
  t.throws(call({}, new Uint32Array(1)), RangeError, 'too little room for the answer');
  t.throws(
    call({ ends: new Uint8Array([0, 1]) as unknown as typeof good.ends }),
    TypeError,
    'a wrong array type',
  );
  t.throws(() => Reflect.apply(statTree, undefined, [-1]), TypeError, 'too few arguments');
  t.same(changedOf(tree, good), [], 'the good arrays pass');
});

t.test('the addon loads and checks a tree in a worker thread too', async (t) => {
  const tree = makeTree(t, ['a']);
  const arrays = record(tree);
  writeFileSync(join(tree.root, 'a/new'), '');
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const addon = require(workerData.path);
     const { rootFd, names, ends, depths, expected } = workerData;
     const changed = new Uint32Array(depths.length);
     parentPort.postMessage([...changed.subarray(0, addon.statTree(rootFd, names, ends, depths, expected, changed))]);`,
    { eval: true, workerData: { path: nativeAddonPath(), rootFd: tree.rootFd, ...arrays } },
  );
  const answer = await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  t.same(answer, [1], 'the folder whose entries changed');
  await worker.terminate();
});
