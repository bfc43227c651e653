import { closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { isPinnedFolder } from '../../../core/confinement/confined-workspace.js';
import { HiddenPlaces } from '../../../core/confinement/hidden-places.js';
import { HistoryStore } from '../../../core/history/history-store.js';
import { checkWorkspace } from '../../../core/sessions/workspace.js';
import { WorkspacePins } from '../../../core/sessions/workspace-pins.js';

const NO_PLACES = new HiddenPlaces([]);

function scene(t: Test) {
  const root = mkdtempSync(join(tmpdir(), 'magi-pins-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const file = join(root, 'state', 'history.sqlite');
  const stores: HistoryStore[] = [];
  t.teardown(async () => {
    for (const store of stores) await store.close();
  });
  const open = () => {
    const store = new HistoryStore(file);
    stores.push(store);
    return store;
  };
  return { root, open };
}

function session(store: HistoryStore, id: string, workspace: string, real?: string): void {
  store.createSession(
    {
      session_id: id,
      workspace,
      ...(real ? { workspace_real: real } : {}),
      title: null,
      created_at: 1,
      updated_at: 1,
    },
    { kind: 'session.created', created_at: 1, data: {} },
  );
}

function matches(path: string, pin: Parameters<typeof isPinnedFolder>[1]): boolean {
  const fd = openSync(path, 'r');
  try {
    return isPinnedFolder(fd, pin);
  } finally {
    closeSync(fd);
  }
}

t.test('a workspace is pinned when its session is made, by real path and identity', async (t) => {
  const { root, open } = scene(t);
  const folder = join(root, 'project');
  mkdirSync(folder);
  const link = join(root, 'link-to-project');
  symlinkSync(folder, link);
  const store = open();
  const pins = new WorkspacePins(store, NO_PLACES);
  const checked = await checkWorkspace(link, join(root, 'magi'), NO_PLACES);
  t.equal(checked.real, folder, 'the real path, links followed');
  session(store, 'ses_a', checked.workspace, checked.real);
  pins.pin('ses_a', checked);
  const pin = await pins.of('ses_a');
  t.match(pin, { path: link, real: folder, identity: { dev: /^\d+$/, ino: /^\d+$/ } });
  t.equal(store.workspaceRealOf('ses_a'), folder, 'the real path is durable');
  t.ok(matches(link, pin!));
  renameSync(folder, join(root, 'moved'));
  mkdirSync(folder);
  t.notOk(matches(link, pin!), 'a folder put in its place is not it');
  t.equal(await pins.of('ses_missing'), null);
});

t.test('after a restart a session is pinned at its first use, at its recorded real path', async (t) => {
  const { root, open } = scene(t);
  const folder = join(root, 'project');
  mkdirSync(folder);
  session(open(), 'ses_a', folder, folder);
  const pins = new WorkspacePins(open(), NO_PLACES);
  t.match(pins.known('ses_a'), { real: folder, identity: null }, 'before its first use: by its real path');
  const pin = await pins.of('ses_a');
  t.match(pin, { real: folder, identity: { dev: /^\d+$/ } }, 'then by its identity too');
  t.equal(pins.known('ses_a'), pin, 'kept for the daemon’s life');
});

t.test('a workspace swapped for a link while the daemon was stopped is not pinned there', async (t) => {
  const { root, open } = scene(t);
  const folder = join(root, 'project');
  const other = join(root, 'home');
  mkdirSync(folder);
  mkdirSync(other);
  session(open(), 'ses_a', folder, folder);
  renameSync(folder, join(root, 'project.old'));
  symlinkSync(other, folder);
  const pin = await new WorkspacePins(open(), NO_PLACES).of('ses_a');
  t.match(pin, { real: folder, identity: null });
  t.notOk(matches(folder, pin!), 'what the path leads to now is refused');
});

t.test('a session of a store made before pins has its real path recorded at its first use', async (t) => {
  const { root, open } = scene(t);
  const folder = join(root, 'project');
  mkdirSync(folder);
  const link = join(root, 'link');
  symlinkSync(folder, link);
  const store = open();
  session(store, 'ses_old', link);
  t.equal(store.workspaceRealOf('ses_old'), null, 'none recorded');
  const pin = await new WorkspacePins(store, NO_PLACES).of('ses_old');
  t.match(pin, { path: link, real: folder, identity: { dev: /^\d+$/ } });
  t.equal(store.workspaceRealOf('ses_old'), folder, 'recorded now');
  store.pinWorkspaceReal('ses_old', '/elsewhere');
  t.equal(store.workspaceRealOf('ses_old'), folder, 'and never replaced');
});

t.test('a workspace that is, or lies in, a place no tool may read is refused at creation', async (t) => {
  const { root } = scene(t);
  const ssh = join(root, 'user', '.ssh');
  mkdirSync(join(ssh, 'keys'), { recursive: true });
  const places = new HiddenPlaces([ssh]);
  for (const workspace of [ssh, join(ssh, 'keys')]) {
    await t.rejects(checkWorkspace(workspace, join(root, 'magi'), places), {
      code: 'invalid_payload',
      message: 'the workspace cannot be a place that holds credentials',
    });
  }
  t.ok(
    await checkWorkspace(join(root, 'user'), join(root, 'magi'), places),
    'the folder holding one is fine',
  );
});
