import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { logLines, shortTempDir, startDaemon } from './spawn-daemon.js';

t.test('serve prints exactly one ready line and listens on a private socket', async (t) => {
  const root = shortTempDir(t);
  // The socket directory does not exist yet: serve creates it.
  const socket = join(root, 'run', 'd.sock');
  const { magid, ready } = await startDaemon(t, { socket, home: join(root, 'home') });

  t.strictSame(Object.keys(ready).sort(), ['instance_id', 'pid', 'ready', 'socket']);
  t.equal(ready.ready, true);
  t.equal(ready.socket, socket);
  t.equal(ready.pid, magid.pid, 'the pid is the serving process');
  t.match(ready.instance_id, /^inst_/);

  t.equal(lstatSync(socket).mode & 0o777, 0o600, 'socket mode 0600');
  t.ok(lstatSync(socket).isSocket());
  t.equal(lstatSync(join(root, 'run')).mode & 0o777, 0o700, 'socket directory mode 0700');
  t.equal(lstatSync(join(root, 'run')).uid, process.getuid?.(), 'the directory is the user’s');

  const { client, daemonPid } = await connectSocket(socket);
  const init = await client.initialize([]);
  t.equal(init.instance_id, ready.instance_id, 'initialize names the same instance');
  t.equal(daemonPid, ready.pid, 'the peer on the socket is the process that printed the line');
  client.close();

  magid.child.kill('SIGTERM');
  t.strictSame(await magid.waitExit(), { code: 0, signal: null });
  t.equal(magid.stdout, `${JSON.stringify(ready)}\n`, 'stdout held the ready line and nothing else');

  const logs = logLines(magid.stderr);
  t.ok(logs.length >= 2, 'stderr carries pino JSON lines');
  t.ok(
    logs.every(
      (line) => typeof line.level === 'number' && typeof line.time === 'number' && line.pid === ready.pid,
    ),
    'each has a level, a time and the pid',
  );
  t.ok(
    logs.some((line) => line.msg === 'listening' && line.instance_id === ready.instance_id),
    'the listening line names the instance',
  );
});
