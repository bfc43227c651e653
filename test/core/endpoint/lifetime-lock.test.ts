import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  chownSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { EndpointError } from '../../../core/endpoint/endpoint-error.js';
import { LifetimeLock, LockHeldError } from '../../../core/endpoint/lifetime-lock.js';
import { nativeAddonPath } from '../../../core/endpoint/native.js';
import { firstLine, spawnPlainNode } from './plain-node.js';

const dir = mkdtempSync(join(tmpdir(), 'magi-lock-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function openFdCount(): number {
  return readdirSync('/proc/self/fd').length;
}

let counter = 0;
function freshLockPath(): string {
  counter += 1;
  return join(dir, `magid-${counter}.lock`);
}

function acquireForTest(t: Test, path: string): LifetimeLock {
  const lock = LifetimeLock.acquire(path);
  t.teardown(() => lock.release());
  return lock;
}

/** A separate process that tries the same flock through the addon and reports `locked` or `held`. */
function lockingChild(t: Test, path: string): ChildProcess {
  const script = `
    const fs = require('node:fs');
    const { flock } = require(process.argv[1]);
    const fd = fs.openSync(process.argv[2], fs.constants.O_RDWR | fs.constants.O_CREAT, 0o600);
    if (flock(fd, true, true)) {
      process.stdout.write('locked\\n');
      setInterval(() => {}, 60_000);
    } else {
      process.stdout.write('held\\n');
    }
  `;
  const child = spawnPlainNode(script, [nativeAddonPath(), path], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

t.test('a second acquire in the same process is refused until the first releases', async (t) => {
  const path = freshLockPath();
  const first = LifetimeLock.acquire(path);
  t.equal(first.path, path);
  t.equal(lstatSync(path).mode & 0o777, 0o600, 'the lock file is created 0600');

  const fdsBefore = openFdCount();
  const refusal = t.throws(() => LifetimeLock.acquire(path));
  t.equal(openFdCount(), fdsBefore, 'a refused acquire closes its fd');
  t.type(refusal, LockHeldError);
  t.type(refusal, EndpointError);
  t.match(refusal, { message: 'another magid already holds the lock for this home', reason: 'lock_held' });

  first.release();
  first.release();
  t.notOk(first.isStillOurs(), 'a released lock is no longer ours');
  const second = acquireForTest(t, path);
  t.ok(second.isStillOurs());
});

t.test('another process is refused while the holder lives', async (t) => {
  const path = freshLockPath();
  acquireForTest(t, path);
  const child = lockingChild(t, path);
  t.equal(await firstLine(child), 'held');
});

t.test('a holder killed with SIGKILL leaves no stale lock behind', async (t) => {
  const path = freshLockPath();
  const holder = lockingChild(t, path);
  t.equal(await firstLine(holder), 'locked');
  t.throws(() => LifetimeLock.acquire(path), LockHeldError, 'refused while the holder lives');

  const exited = once(holder, 'exit');
  holder.kill('SIGKILL');
  t.strictSame(await exited, [null, 'SIGKILL']);
  const lock = acquireForTest(t, path);
  t.ok(lock.isStillOurs(), 'acquired once the holder is dead');
});

t.test('a spawned child does not inherit the lock', async (t) => {
  const path = freshLockPath();
  const lock = LifetimeLock.acquire(path);
  const bystander = spawnPlainNode('setInterval(() => {}, 60_000)', [], { stdio: 'ignore' });
  t.teardown(() => {
    bystander.kill('SIGKILL');
  });
  await once(bystander, 'spawn');
  lock.release();
  const again = acquireForTest(t, path);
  t.ok(again.isStillOurs(), 'the lock died with the fd, not with the child');
});

t.test('isStillOurs turns false once the lock file is unlinked', async (t) => {
  const path = freshLockPath();
  const lock = acquireForTest(t, path);
  t.ok(lock.isStillOurs());
  unlinkSync(path);
  t.notOk(lock.isStillOurs());
  // This is why the check matters: the name is free for a second daemon to lock a new inode.
  const intruder = acquireForTest(t, path);
  t.ok(intruder.isStillOurs());
  t.notOk(lock.isStillOurs());
});

t.test('isStillOurs turns false once the lock file is replaced', async (t) => {
  const path = freshLockPath();
  const lock = acquireForTest(t, path);
  const replacement = `${path}.new`;
  writeFileSync(replacement, '', { mode: 0o600 });
  renameSync(replacement, path);
  t.notOk(lock.isStillOurs());
});

t.test('releaseAndRemove unlinks its own lock file while it holds it, then releases', async (t) => {
  const path = freshLockPath();
  const lock = LifetimeLock.acquire(path);
  // An opener that got the inode before the removal: the lock is still held, so it cannot take it.
  const early = lockingChild(t, path);
  t.equal(await firstLine(early), 'held');
  lock.releaseAndRemove();
  t.throws(() => lstatSync(path), { code: 'ENOENT' }, 'the file is gone');
  t.notOk(lock.isStillOurs());
  lock.releaseAndRemove();
  const next = acquireForTest(t, path);
  t.ok(next.isStillOurs(), 'the next daemon makes and locks a new file');
});

t.test('releaseAndRemove of a lock whose file was replaced leaves the new file alone', async (t) => {
  const path = freshLockPath();
  const lock = LifetimeLock.acquire(path);
  unlinkSync(path);
  const intruder = acquireForTest(t, path);
  lock.releaseAndRemove();
  t.ok(intruder.isStillOurs(), "the other daemon's file is still there, still locked");
});

t.test('a lock file that is a symlink or owned by another user is refused', async (t) => {
  t.equal(process.getuid?.(), 0, 'this test must run as root to chown the lock file');
  const target = freshLockPath();
  writeFileSync(target, '', { mode: 0o600 });
  const link = freshLockPath();
  symlinkSync(target, link);
  t.throws(() => LifetimeLock.acquire(link), new EndpointError('lock_file_unsafe'));

  const foreign = freshLockPath();
  writeFileSync(foreign, '', { mode: 0o600 });
  chownSync(foreign, 65_534, 65_534);
  t.throws(() => LifetimeLock.acquire(foreign), new EndpointError('lock_file_unsafe'));
  // The refused attempt must not keep a lock on the file.
  chownSync(foreign, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
  t.ok(acquireForTest(t, foreign).isStillOurs());
});

/** Loads lifetime-lock.ts with an addon whose flock first runs `beforeLock` (a racing process). */
async function lockModuleRacing(t: Test, beforeLock: (path: string) => void, path: string) {
  const native = await import('../../../core/endpoint/native.js');
  const real = native.nativeAddon();
  const racing = {
    ...real,
    flock(fd: number, exclusive: boolean, nonBlocking: boolean): boolean {
      beforeLock(path);
      return real.flock(fd, exclusive, nonBlocking);
    },
  };
  return t.mockImport<typeof import('../../../core/endpoint/lifetime-lock.js')>(
    '../../../core/endpoint/lifetime-lock.js',
    { '../../../core/endpoint/native.js': { ...native, nativeAddon: () => racing } },
  );
}

function replaceFile(path: string): void {
  const replacement = `${path}.new`;
  writeFileSync(replacement, '', { mode: 0o600 });
  renameSync(replacement, path);
}

t.test('a lock file replaced between open and lock is opened and locked again', async (t) => {
  const path = freshLockPath();
  let races = 0;
  const racingModule = await lockModuleRacing(
    t,
    (racedPath) => {
      races += 1;
      if (races === 1) replaceFile(racedPath);
    },
    path,
  );
  const lock = racingModule.LifetimeLock.acquire(path);
  t.teardown(() => lock.release());
  t.equal(races, 2, 'retried once');
  t.ok(lock.isStillOurs(), 'the lock is on the inode now at the path');
  t.throws(() => LifetimeLock.acquire(path), LockHeldError);
});

t.test('a lock file replaced on every attempt is refused', async (t) => {
  const path = freshLockPath();
  const racingModule = await lockModuleRacing(t, replaceFile, path);
  const fdsBefore = openFdCount();
  t.throws(() => racingModule.LifetimeLock.acquire(path), new EndpointError('lock_file_unstable'));
  t.equal(openFdCount(), fdsBefore, 'both attempts closed their fds');
});

t.test('a lock path in a missing directory fails with the system error', async (t) => {
  t.throws(() => LifetimeLock.acquire(join(dir, 'missing', 'magid.lock')), { code: 'ENOENT' });
});
