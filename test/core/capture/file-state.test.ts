import t from 'tap';
import { type FileState, sameFileState, sameInode } from '../../../core/capture/file-state.js';

const base: FileState = {
  dev: 2049n,
  ino: 1234n,
  nlink: 1n,
  size: 10n,
  mtimeNs: 1_700_000_000_000_000_001n,
  ctimeNs: 1_700_000_000_000_000_002n,
  mode: 0o100644n,
};

t.test('identical states are the same', async (t) => {
  t.ok(sameFileState(base, { ...base }));
});

t.test('a difference in any compared field is a change', async (t) => {
  for (const field of Object.keys(base) as (keyof FileState)[]) {
    t.notOk(sameFileState(base, { ...base, [field]: base[field] + 1n }), field);
  }
});

t.test('sameInode compares device and inode only', async (t) => {
  const resized: FileState = { ...base, size: 99n };
  t.ok(sameInode(base, resized));
  t.notOk(sameInode(base, { ...base, dev: 1n }));
  t.notOk(sameInode(base, { ...base, ino: 1n }));
});
