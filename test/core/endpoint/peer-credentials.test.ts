import { once } from 'node:events';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { EndpointError } from '../../../core/endpoint/endpoint-error.js';
import { isSameUser, peerCredentials } from '../../../core/endpoint/peer-credentials.js';
import { spawnPlainNode } from './plain-node.js';

const NOBODY = 65_534;

const dir = mkdtempSync(join(tmpdir(), 'magi-peer-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function listen(t: Test, name: string): Promise<{ server: net.Server; path: string }> {
  const path = join(dir, name);
  const server = net.createServer({ pauseOnConnect: true });
  const accepted = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => accepted.add(socket));
  server.listen(path);
  await once(server, 'listening');
  t.teardown(async () => {
    // Accepted sockets stay paused, so only destroying them lets the server finish closing.
    for (const socket of accepted) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { server, path };
}

t.test('both ends of a connection in this process see this process', async (t) => {
  const { server, path } = await listen(t, 'same.sock');
  const accepted = once(server, 'connection');
  const client = net.connect(path);
  await once(client, 'connect');
  const [socket] = (await accepted) as [net.Socket];
  t.teardown(() => {
    socket.destroy();
    client.destroy();
  });

  const expected = { pid: process.pid, uid: process.getuid?.(), gid: process.getgid?.() };
  t.strictSame(peerCredentials(socket), expected, 'the daemon side sees the client');
  t.strictSame(peerCredentials(client), expected, 'the client side sees the daemon');
  t.ok(isSameUser(peerCredentials(socket)));
});

t.test('a connection from another user is seen with that uid', async (t) => {
  // The check needs a second user; CI runs as root, so a non-root run must fail here, not skip.
  t.equal(process.getuid?.(), 0, 'this test must run as root to connect as nobody');
  if (process.getuid?.() !== 0) return;

  const { server, path } = await listen(t, 'other.sock');
  // File modes would refuse nobody; open them so that only the peer check can tell the users apart.
  chmodSync(dir, 0o711);
  chmodSync(path, 0o666);

  const accepted = once(server, 'connection');
  const script = `
    const socket = require('node:net').connect(process.argv[1]);
    socket.on('error', (error) => { console.error(error.code); process.exit(2); });
    socket.on('data', () => {});
    socket.on('end', () => socket.end());
  `;
  const child = spawnPlainNode(script, [path], {
    uid: NOBODY,
    gid: NOBODY,
    cwd: '/',
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  const [socket] = (await accepted) as [net.Socket];

  const credentials = peerCredentials(socket);
  socket.destroy();
  t.strictSame(credentials, { pid: child.pid, uid: NOBODY, gid: NOBODY });
  t.notOk(isSameUser(credentials));
  t.strictSame(await exited, [0, null], 'the child connected and left cleanly');
});

t.test('a socket without a file descriptor is refused with a clear error', async (t) => {
  t.throws(() => peerCredentials(new net.Socket()), new EndpointError('socket_has_no_fd'));

  const { path } = await listen(t, 'closed.sock');
  const client = net.connect(path);
  await once(client, 'connect');
  client.destroy();
  await once(client, 'close');
  t.throws(() => peerCredentials(client), { name: 'EndpointError', reason: 'socket_has_no_fd' });
});

t.test('isSameUser compares with this process uid', async (t) => {
  const uid = process.getuid?.() ?? -1;
  t.ok(isSameUser({ pid: 1, uid, gid: 0 }));
  t.notOk(isSameUser({ pid: process.pid, uid: uid + 1, gid: 0 }));
});
