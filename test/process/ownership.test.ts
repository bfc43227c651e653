import { lstatSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { runMagid, shortTempDir, startDaemon } from './spawn-daemon.js';

t.test('a daemon whose lock file is replaced stops serving and leaves the socket name alone', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'run', 'd.sock');
  const { magid } = await startDaemon(t, { socket, home });
  const lock = join(home, 'magid.lock');
  rmSync(lock);
  writeFileSync(lock, '');
  const exit = await magid.waitExit(10_000);
  t.equal(exit.code, 2, 'exits with status 2');
  t.ok(lstatSync(socket).isSocket(), 'the socket name is left in place for whoever owns it now');
});

t.test('a daemon whose socket is replaced by another stops without removing the new one', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'run', 'd.sock');
  const { magid } = await startDaemon(t, { socket, home });
  const other = createServer();
  const otherPath = join(root, 'run', 'other.sock');
  await new Promise<void>((resolve) => other.listen(otherPath, resolve));
  t.teardown(() => other.close());
  renameSync(otherPath, socket);
  const replaced = lstatSync(socket).ino;
  const exit = await magid.waitExit(10_000);
  t.equal(exit.code, 2);
  t.equal(lstatSync(socket).ino, replaced, "the other server's socket is still there");
});

t.test('status and stop find the default socket of a home', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(home, 'run', 'magid.sock');
  const { magid, ready } = await startDaemon(t, { socket, home });
  t.equal(ready.socket, socket);
  const env = { XDG_RUNTIME_DIR: '' };
  const status = runMagid(t, ['status', '--home', home], env);
  t.equal((await status.waitExit()).code, 0);
  t.match(JSON.parse(status.stdout), { running: true, pid: ready.pid });
  const stop = runMagid(t, ['stop', '--home', home], env);
  t.equal((await stop.waitExit()).code, 0);
  t.equal((await magid.waitExit()).code, 0);
});
