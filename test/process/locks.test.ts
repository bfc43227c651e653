import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { runMagid, shortTempDir, startDaemon } from './spawn-daemon.js';

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
