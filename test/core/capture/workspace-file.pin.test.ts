import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CAPTURE_REFUSALS } from '../../../core/capture/refusals.js';
import { captureWorkspaceFile } from '../../../core/capture/workspace-file.js';
import { pinnedWorkspace } from '../../helpers/confined.js';

t.test('a capture reads only the pinned workspace, and nothing hidden in it', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'magi-capture-pin-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  for (const folder of [ws, home, join(ws, '.m2')]) mkdirSync(folder, { recursive: true });
  writeFileSync(join(ws, 'skill.md'), 'instructions\n');
  writeFileSync(join(ws, '.m2', 'settings.xml'), '<password>x</password>\n');
  writeFileSync(join(home, 'skill.md'), 'the home’s\n');
  const pin = pinnedWorkspace(ws, ['.m2/settings.xml']);
  const capture = (path: string) =>
    captureWorkspaceFile({ workspace: pin, path, maxBytes: 1_024, excludedDirectories: [] });

  t.equal(capture('skill.md').text, 'instructions\n');
  t.throws(
    () => capture('.m2/settings.xml'),
    { code: 'invalid_payload', message: CAPTURE_REFUSALS.credential_path },
    'a hidden place of the workspace is refused like a credential path',
  );
  renameSync(ws, join(root, 'ws.old'));
  symlinkSync(home, ws);
  t.throws(
    () => capture('skill.md'),
    { name: 'WireError', code: 'workspace_changed' },
    'a swapped workspace',
  );
});
