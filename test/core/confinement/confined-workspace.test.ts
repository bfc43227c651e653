import { closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { isPinnedFolder } from '../../../core/confinement/confined-workspace.js';
import { pinnedWorkspace } from '../../helpers/confined.js';

function opened(t: { teardown(fn: () => void): void }, path: string): number {
  const fd = openSync(path, 'r');
  t.teardown(() => closeSync(fd));
  return fd;
}

t.test('a folder is the pinned one while it keeps its identity at its real path', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'magi-pin-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const inner = join(root, 'inner');
  const elsewhere = join(root, 'elsewhere');
  mkdirSync(inner);
  mkdirSync(elsewhere);
  const pin = pinnedWorkspace(inner);
  t.ok(isPinnedFolder(opened(t, inner), pin), 'the same folder');

  renameSync(inner, join(root, 'inner.old'));
  mkdirSync(inner);
  t.notOk(isPinnedFolder(opened(t, inner), pin), 'another folder put at its path');
  rmSync(inner, { recursive: true });
  symlinkSync(elsewhere, inner);
  t.notOk(isPinnedFolder(opened(t, inner), pin), 'a link to another folder at its path');
  t.notOk(isPinnedFolder(opened(t, join(root, 'inner.old')), pin), 'the folder itself, moved away');

  const byPathAlone = { ...pinnedWorkspace(elsewhere), identity: null };
  t.ok(isPinnedFolder(opened(t, elsewhere), byPathAlone), 'without identity, its real path decides');
  t.notOk(isPinnedFolder(opened(t, join(root, 'inner.old')), byPathAlone));
});
