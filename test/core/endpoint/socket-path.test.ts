import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { EndpointError } from '../../../core/endpoint/endpoint-error.js';
import { homeId, realHomePath } from '../../../core/endpoint/home-identity.js';
import {
  checkSocketPath,
  defaultSocketPath,
  MAX_SOCKET_PATH_BYTES,
  prepareSocketDirectory,
  privateBindPath,
  publishSocket,
  removeStalePrivateSockets,
  unpublishSocket,
} from '../../../core/endpoint/socket-path.js';

const root = mkdtempSync(join(tmpdir(), 'magi-sock-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));

let counter = 0;
function freshDir(): string {
  counter += 1;
  const dir = join(root, `d${counter}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** An absolute path of exactly `bytes` UTF-8 bytes. */
function pathOfBytes(bytes: number, filler = 'a'): string {
  const fillerBytes = Buffer.byteLength(filler);
  const path = `/${filler.repeat(Math.floor((bytes - 1) / fillerBytes))}`;
  return path + 'b'.repeat(bytes - Buffer.byteLength(path));
}

async function listen(t: Test, path: string): Promise<net.Server> {
  const server = net.createServer((socket) => socket.end('hello'));
  server.listen(path);
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

async function greeting(path: string): Promise<string> {
  const client = net.connect(path);
  let text = '';
  client.setEncoding('utf8');
  client.on('data', (chunk: string) => {
    text += chunk;
  });
  await once(client, 'end');
  client.destroy();
  return text;
}

/** A socket inode with no listener behind it, as a crashed daemon leaves it. */
async function staleSocketAt(path: string): Promise<void> {
  const bound = `${path}.bound`;
  const server = net.createServer();
  server.listen(bound);
  await once(server, 'listening');
  renameSync(bound, path);
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

t.test('socket path length is bounded by sun_path', async (t) => {
  t.equal(MAX_SOCKET_PATH_BYTES, 107);
  t.doesNotThrow(() => checkSocketPath(pathOfBytes(107)));
  t.throws(() => checkSocketPath(pathOfBytes(108)), new EndpointError('socket_path_too_long'));
  const multiByte = pathOfBytes(108, 'é');
  t.ok(multiByte.length < 108, 'fewer than 108 characters');
  t.throws(
    () => checkSocketPath(multiByte),
    new EndpointError('socket_path_too_long'),
    'counted in UTF-8 bytes',
  );
});

t.test('a socket path must be absolute and free of NUL', async (t) => {
  t.throws(() => checkSocketPath('run/magid.sock'), new EndpointError('socket_path_not_absolute'));
  t.throws(() => checkSocketPath('/run/ma\0gid.sock'), new EndpointError('socket_path_has_nul'));
});

t.test('a missing socket directory is created with mode 0700', async (t) => {
  const dir = join(freshDir(), 'a', 'b');
  const previousUmask = process.umask(0o277);
  t.teardown(() => process.umask(previousUmask));
  prepareSocketDirectory(dir);
  const stats = lstatSync(dir);
  t.ok(stats.isDirectory());
  t.equal(stats.mode & 0o777, 0o700, 'exactly 0700 whatever the umask');
  t.equal(lstatSync(dirname(dir)).mode & 0o777, 0o700, 'intermediate directories are created 0700 too');
  t.doesNotThrow(() => prepareSocketDirectory(dir), 'an existing good directory is accepted');
});

t.test('an unsafe existing socket directory is refused', async (t) => {
  const unsafe = new EndpointError('socket_directory_unsafe');
  t.equal(unsafe.message, 'socket directory must be a directory of mode 0700 owned by the current user');

  const open = freshDir();
  chmodSync(open, 0o755);
  t.throws(() => prepareSocketDirectory(open), unsafe, 'mode 0755');
  chmodSync(open, 0o710);
  t.throws(() => prepareSocketDirectory(open), unsafe, 'any group bit');

  const link = join(root, `link${counter}`);
  symlinkSync(freshDir(), link);
  t.throws(() => prepareSocketDirectory(link), unsafe, 'a symlink to a good directory');

  const file = join(freshDir(), 'file');
  writeFileSync(file, '');
  t.throws(() => prepareSocketDirectory(file), unsafe, 'a regular file');

  t.throws(() => prepareSocketDirectory(join(file, 'sub')), { code: 'ENOTDIR' }, 'below a regular file');

  t.equal(process.getuid?.(), 0, 'this test must run as root to chown the directory');
  const foreign = freshDir();
  chownSync(foreign, 65_534, 65_534);
  t.throws(() => prepareSocketDirectory(foreign), unsafe, 'owned by another user');
});

t.test('the private bind path is a unique sibling that fits', async (t) => {
  const publicPath = join(freshDir(), 'magid.sock');
  const first = privateBindPath(publicPath);
  const second = privateBindPath(publicPath);
  t.equal(dirname(first), dirname(publicPath));
  t.not(first, publicPath);
  t.not(first, second);
  t.ok(basename(first).includes(String(process.pid)));

  const longPublic = `${pathOfBytes(96)}/magid.sock`;
  t.equal(Buffer.byteLength(longPublic), 107);
  const short = privateBindPath(longPublic);
  t.equal(dirname(short), dirname(longPublic));
  t.ok(Buffer.byteLength(short) <= 107, 'falls back to a shorter name');

  t.throws(() => privateBindPath(`${pathOfBytes(100)}/s`), new EndpointError('private_socket_path_too_long'));
  t.throws(() => privateBindPath(pathOfBytes(108)), new EndpointError('socket_path_too_long'));
});

t.test('publishing replaces a stale socket and leaves mode 0600', async (t) => {
  const publicPath = join(freshDir(), 'magid.sock');
  await staleSocketAt(publicPath);
  t.ok(lstatSync(publicPath).isSocket());
  await t.rejects(greeting(publicPath), { code: 'ECONNREFUSED' }, 'nobody listens on the stale socket');

  const privatePath = privateBindPath(publicPath);
  const server = await listen(t, privatePath);
  const identity = publishSocket(privatePath, publicPath);

  const stats = lstatSync(publicPath, { bigint: true });
  t.strictSame(identity, { dev: stats.dev, ino: stats.ino });
  t.equal(Number(stats.mode) & 0o777, 0o600);
  t.throws(() => lstatSync(privatePath), { code: 'ENOENT' }, 'the private name is gone');
  t.equal(await greeting(publicPath), 'hello', 'the public path reaches the new server');

  await new Promise<void>((resolve) => server.close(() => resolve()));
  t.ok(lstatSync(publicPath).isSocket(), 'closing the server does not remove the public socket');
});

t.test('stale private bind names of the socket path are removed, and nothing else', async (t) => {
  const dir = freshDir();
  const publicPath = join(dir, 'magid.sock');
  const stale = join(dir, '.magid.sock.4242.0a1b2c3d');
  await staleSocketAt(stale);
  const otherSocket = join(dir, '.other.sock.4242.0a1b2c3d');
  await staleSocketAt(otherSocket);
  const lookalikeFile = join(dir, '.magid.sock.4243.0a1b2c3d');
  writeFileSync(lookalikeFile, '');
  const oddName = join(dir, '.magid.sock.x.0a1b2c3d');
  await staleSocketAt(oddName);
  await staleSocketAt(publicPath);

  t.equal(removeStalePrivateSockets(publicPath), 1);
  t.throws(() => lstatSync(stale), { code: 'ENOENT' });
  for (const kept of [otherSocket, lookalikeFile, oddName, publicPath])
    t.ok(lstatSync(kept), `${basename(kept)} stays`);
  t.equal(removeStalePrivateSockets(publicPath), 0);
});

t.test('publishing something that is not a socket is refused', async (t) => {
  const dir = freshDir();
  const notSocket = join(dir, 'plain');
  writeFileSync(notSocket, '');
  t.throws(() => publishSocket(notSocket, join(dir, 'magid.sock')), new EndpointError('not_a_socket'));
  t.throws(() => lstatSync(join(dir, 'magid.sock')), { code: 'ENOENT' });
});

t.test('unpublishing removes only the socket this daemon published', async (t) => {
  const publicPath = join(freshDir(), 'magid.sock');
  const ownPrivate = privateBindPath(publicPath);
  await listen(t, ownPrivate);
  const identity = publishSocket(ownPrivate, publicPath);

  // Another daemon published its own socket at the same name meanwhile.
  const otherPrivate = privateBindPath(publicPath);
  await listen(t, otherPrivate);
  const otherIdentity = publishSocket(otherPrivate, publicPath);
  t.not(otherIdentity.ino, identity.ino);

  t.equal(unpublishSocket(publicPath, identity), false);
  t.equal(lstatSync(publicPath, { bigint: true }).ino, otherIdentity.ino, 'the other socket stays');

  t.equal(unpublishSocket(publicPath, otherIdentity), true);
  t.throws(() => lstatSync(publicPath), { code: 'ENOENT' }, 'its own socket is removed');
  t.equal(unpublishSocket(publicPath, otherIdentity), false, 'a missing path is not an error');
  const file = join(dirname(publicPath), 'file');
  writeFileSync(file, '');
  t.throws(
    () => unpublishSocket(join(file, 'magid.sock'), identity),
    { code: 'ENOTDIR' },
    'other errors are',
  );
});

t.test('the default socket path prefers XDG_RUNTIME_DIR when it fits', async (t) => {
  const home = '/home/someone/.magi';
  const user = '/home/someone';
  t.equal(
    defaultSocketPath(home, { XDG_RUNTIME_DIR: '/run/user/1000' }, user),
    '/run/user/1000/magi/magid.sock',
  );
  t.equal(defaultSocketPath(home, {}, user), '/home/someone/.magi/run/magid.sock');
  t.equal(defaultSocketPath(home, { XDG_RUNTIME_DIR: '' }, user), '/home/someone/.magi/run/magid.sock');
  t.equal(
    defaultSocketPath(home, { XDG_RUNTIME_DIR: 'run/user' }, user),
    '/home/someone/.magi/run/magid.sock',
  );
  const longRuntime = pathOfBytes(100);
  t.equal(
    defaultSocketPath(home, { XDG_RUNTIME_DIR: longRuntime }, user),
    '/home/someone/.magi/run/magid.sock',
  );
});

t.test('every home other than the default one has its own default socket, named by its id', async (t) => {
  const user = '/home/someone';
  const env = { XDG_RUNTIME_DIR: '/run/user/1000' };
  const other = defaultSocketPath('/srv/apps/notes-home', env, user);
  t.equal(other, `/run/user/1000/magi/magid-${homeId('/srv/apps/notes-home')}.sock`);
  t.match(other, /magid-[0-9a-f]{16}\.sock$/, 'the name carries a hash, not the path');
  t.not(defaultSocketPath('/srv/apps/other-home', env, user), other, 'two homes, two sockets');
  t.equal(
    defaultSocketPath('/home/someone/.magi/', env, user),
    '/run/user/1000/magi/magid.sock',
    'the default home however spelled',
  );
  t.equal(defaultSocketPath('/srv/apps/notes-home', {}, user), '/srv/apps/notes-home/run/magid.sock');
});

t.test(
  "a home's id follows its real path: a link to it, or a home not yet made, has the same id",
  async (t) => {
    const root = t.testdir({ real: {} });
    symlinkSync(join(root, 'real'), join(root, 'link'));
    t.equal(homeId(join(root, 'link')), homeId(join(root, 'real')));
    t.equal(
      realHomePath(join(root, 'link', 'later', 'home')),
      join(realpathSync(root), 'real', 'later', 'home'),
    );
    t.not(homeId(join(root, 'real', 'a')), homeId(join(root, 'real', 'b')));
  },
);
