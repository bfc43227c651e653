import { mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { EndpointError } from '../../../core/endpoint/endpoint-error.js';
import { acquireLock, lockHome } from '../../../core/endpoint/home-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'magi-home-lock-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('lockHome creates a missing home and holds its lock until released', async (t) => {
  const home = join(dir, 'a', 'home');
  const lock = lockHome(home);
  t.teardown(() => lock.release());
  t.equal(statSync(home).mode & 0o777, 0o700, 'the home is private');
  t.equal(lock.path, join(home, 'magid.lock'));
  t.ok(lock.isStillOurs());
  t.throws(
    () => lockHome(home),
    new EndpointError('home_in_use'),
    'a second daemon is told the home is in use',
  );
  lock.release();
  const again = lockHome(home);
  t.ok(again.isStillOurs(), 'a released home can be taken again');
  again.release();
});

t.test('acquireLock names what the held lock protects', async (t) => {
  const path = join(dir, 'd.sock.lock');
  const lock = acquireLock(path, 'socket_path_in_use');
  t.teardown(() => lock.release());
  t.throws(() => acquireLock(path, 'socket_path_in_use'), new EndpointError('socket_path_in_use'));
});

t.test('acquireLock lets any other refusal through unchanged', async (t) => {
  const path = join(dir, 'linked.lock');
  symlinkSync(join(dir, 'elsewhere'), path);
  t.throws(() => acquireLock(path, 'home_in_use'), new EndpointError('lock_file_unsafe'));
});
