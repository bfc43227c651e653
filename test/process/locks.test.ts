import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { type MagidProcess, runMagid, shortTempDir, startDaemon, startStdio } from './spawn-daemon.js';

// Eight daemons start from the TypeScript sources, each in a few seconds: more than the default file timeout.
t.setTimeout(180_000);

const LOCK_HELD = 'magid: another magid already serves this home\n';

async function answersStatus(socket: string, instanceId: string): Promise<boolean> {
  const { client } = await connectSocket(socket);
  try {
    const init = await client.initialize([]);
    const status = await client.call('status');
    return init.instance_id === instanceId && typeof status.sessions === 'number';
  } finally {
    client.close();
  }
}

/** A second daemon that found the home taken: exit 1, the lock message on stderr, nothing on stdout. */
async function refusedForHome(t: Test, magid: MagidProcess): Promise<void> {
  t.strictSame(await magid.waitExit(20_000), { code: 1, signal: null }, 'exits 1');
  t.equal(magid.stdout, '', 'nothing on stdout');
  t.ok(magid.stderr.endsWith(LOCK_HELD), 'the lock message is on stderr');
}

t.test('one daemon per home and per socket path', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'a', 'd.sock');
  const first = await startDaemon(t, { socket, home });
  const published = lstatSync(socket).ino;

  t.test('a second serve on the same home exits non-zero and says why', async (t) => {
    const otherSocket = join(root, 'b', 'd.sock');
    const second = runMagid(t, ['serve', '--socket', otherSocket, '--home', home]);
    const exit = await second.waitExit();
    t.not(exit.code, 0, 'exits non-zero');
    t.equal(exit.signal, null);
    t.equal(second.stdout, '', 'no ready line');
    t.ok(second.stderr.endsWith(LOCK_HELD), 'the lock message is on stderr');
    t.notOk(existsSync(otherSocket), 'it published no socket');
    t.ok(await answersStatus(socket, first.ready.instance_id), 'the first still answers status');
  });

  t.test('a second serve on another home but the same socket path is refused', async (t) => {
    const second = runMagid(t, ['serve', '--socket', socket, '--home', join(root, 'home2')]);
    const exit = await second.waitExit();
    t.not(exit.code, 0, 'exits non-zero');
    t.equal(exit.signal, null);
    t.equal(second.stdout, '', 'no ready line');
    t.match(
      second.stderr,
      /^magid: another magid already serves this socket path$/m,
      'the socket lock message is on stderr',
    );
    t.equal(lstatSync(socket).ino, published, 'the socket is still the one the first daemon published');
    t.ok(await answersStatus(socket, first.ready.instance_id), 'the first still answers status');
  });

  t.test('the first daemon was never disturbed', async (t) => {
    t.ok(first.magid.running);
    first.magid.child.kill('SIGTERM');
    t.strictSame(await first.magid.waitExit(), { code: 0, signal: null });
  });
});

t.test('serve and stdio share the home lock', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');

  t.test('a stdio on the home a serve holds is refused', async (t) => {
    const served = await startDaemon(t, { socket: join(root, 'a', 'd.sock'), home });
    await refusedForHome(t, runMagid(t, ['stdio', '--home', home], {}, 'pipe'));
    t.ok(await answersStatus(served.ready.socket, served.ready.instance_id), 'the serve still answers');
    served.magid.child.kill('SIGTERM');
    t.strictSame(await served.magid.waitExit(), { code: 0, signal: null });
  });

  t.test('a serve or a second stdio on the home a stdio holds is refused', async (t) => {
    const first = await startStdio(t, { home });
    await first.client.initialize([]);
    const otherSocket = join(root, 'b', 'd.sock');
    await refusedForHome(t, runMagid(t, ['serve', '--socket', otherSocket, '--home', home]));
    t.notOk(existsSync(otherSocket), 'the refused serve published no socket');
    await refusedForHome(t, runMagid(t, ['stdio', '--home', home], {}, 'pipe'));
    t.equal((await first.client.call('status')).active_turns, 0, 'the first still answers');
    first.client.close();
    t.strictSame(await first.magid.waitExit(), { code: 0, signal: null });
  });
});
