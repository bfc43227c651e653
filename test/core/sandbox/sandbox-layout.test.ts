import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { resolveLayout, WorkspaceUnavailable } from '../../../core/sandbox/sandbox-layout.js';

async function scratch(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const directory = await realpath(await mkdtemp(join(tmpdir(), 'magi-layout-test-')));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

t.test(
  'hidden paths are sorted around and within the workspace, by kind, missing ones left out',
  async (t) => {
    const root = await scratch(t);
    const home = join(root, 'home');
    const workspace = join(home, 'project');
    await mkdir(join(workspace, '.ssh'), { recursive: true });
    await mkdir(join(home, '.aws'));
    await writeFile(join(home, '.netrc'), 'machine x password y\n');
    await writeFile(join(workspace, '.npmrc'), '//registry/:_authToken=z\n');

    const layout = await resolveLayout(workspace, [
      home,
      join(home, '.aws'),
      join(home, '.netrc'),
      join(home, '.kube'),
      workspace,
      join(workspace, '.ssh'),
      join(workspace, '.npmrc'),
      join(home, '.aws'),
    ]);
    t.equal(layout.workspace, workspace);
    t.same(layout.hiddenAround, [
      { path: home, kind: 'directory' },
      { path: join(home, '.aws'), kind: 'directory' },
      { path: join(home, '.netrc'), kind: 'file' },
      { path: workspace, kind: 'directory' },
    ]);
    t.same(layout.hiddenWithin, [
      { path: join(workspace, '.ssh'), kind: 'directory' },
      { path: join(workspace, '.npmrc'), kind: 'file' },
    ]);
  },
);

t.test('symlinks are resolved, so the cover lands on what they name', async (t) => {
  const root = await scratch(t);
  await mkdir(join(root, 'real-workspace', 'keys'), { recursive: true });
  await mkdir(join(root, 'secrets'));
  await symlink(join(root, 'real-workspace'), join(root, 'workspace'));
  await symlink(join(root, 'secrets'), join(root, 'workspace-secrets'));
  await symlink(join(root, 'real-workspace', 'keys'), join(root, 'keys-link'));
  await symlink(join(root, 'nowhere'), join(root, 'dangling'));

  const layout = await resolveLayout(join(root, 'workspace'), [
    join(root, 'workspace-secrets'),
    join(root, 'keys-link'),
    join(root, 'dangling'),
  ]);
  t.equal(layout.workspace, join(root, 'real-workspace'));
  t.same(layout.hiddenAround, [{ path: join(root, 'secrets'), kind: 'directory' }]);
  t.same(layout.hiddenWithin, [{ path: join(root, 'real-workspace', 'keys'), kind: 'directory' }]);
});

t.test('a workspace that is missing or not a directory is refused', async (t) => {
  const root = await scratch(t);
  await writeFile(join(root, 'file'), '');
  await t.rejects(resolveLayout(join(root, 'missing'), []), WorkspaceUnavailable);
  await t.rejects(resolveLayout(join(root, 'file'), []), WorkspaceUnavailable);
  await t.rejects(resolveLayout(join(root, 'file'), []), {
    message: 'the workspace is not an existing directory',
  });
});

t.test('a sibling whose name starts like the workspace is not inside it', async (t) => {
  const root = await scratch(t);
  await mkdir(join(root, 'work'));
  await mkdir(join(root, 'workshop'));
  const layout = await resolveLayout(join(root, 'work'), [join(root, 'workshop')]);
  t.same(layout.hiddenWithin, []);
  t.same(layout.hiddenAround, [{ path: join(root, 'workshop'), kind: 'directory' }]);
});
