import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import t from 'tap';
import { nativeAddon, nativeAddonPath } from '../../../core/endpoint/native.js';

const dir = mkdtempSync(join(tmpdir(), 'magi-native-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function openFresh(name: string): number {
  const fd = openSync(join(dir, name), 'a+');
  t.teardown(() => closeSync(fd));
  return fd;
}

t.test('the addon is found by walking up from the module: the compiled one, else the prebuilt', async (t) => {
  const path = nativeAddonPath();
  t.ok(isAbsolute(path));
  const compiled = join('native', 'build', 'Release', 'magi_native.node');
  const prebuilt = join('native', 'prebuilds', `${process.platform}-${process.arch}`, 'node.node');
  t.ok(path.endsWith(compiled) || path.endsWith(prebuilt), path);
  t.equal(nativeAddon(), nativeAddon(), 'loaded once');
});

t.test('flock: exclusive conflicts with any other open file description, shared with shared', async (t) => {
  const { flock } = nativeAddon();
  const first = openFresh('exclusive.lock');
  const second = openFresh('exclusive.lock');
  t.equal(flock(first, true, true), true);
  t.equal(flock(second, true, true), false, 'EWOULDBLOCK is false, not an error');
  t.equal(flock(second, false, true), false);

  const sharedA = openFresh('shared.lock');
  const sharedB = openFresh('shared.lock');
  t.equal(flock(sharedA, false, true), true);
  t.equal(flock(sharedB, false, true), true);
  t.equal(flock(openFresh('shared.lock'), true, true), false);
});

t.test('errors carry the errno name in code', async (t) => {
  const { flock, peerCredentials } = nativeAddon();
  t.throws(() => flock(1_000_000, true, true), { code: 'EBADF', errno: 9, syscall: 'flock' });
  t.throws(() => peerCredentials(openFresh('plain')), {
    code: 'ENOTSOCK',
    syscall: 'getsockopt(SO_PEERCRED)',
  });
});

t.test('arguments are checked before any system call', async (t) => {
  const { flock, peerCredentials } = nativeAddon();
  t.throws(() => peerCredentials(-1), TypeError);
  t.throws(() => peerCredentials(1.5), TypeError);
  t.throws(() => Reflect.apply(peerCredentials, undefined, ['3']), { code: 'ERR_INVALID_ARG_TYPE' });
  t.throws(() => Reflect.apply(flock, undefined, [0, true]), TypeError);
  t.throws(() => Reflect.apply(flock, undefined, [0, 1, true]), { code: 'ERR_INVALID_ARG_TYPE' });
});
