import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import t from 'tap';
import { LaunchError, launchDaemon } from '../../client/launch.js';
import { MagiClient } from '../../client/magi-client.js';
import { isAlive } from '../../config/daemon-record.js';
import { firstLine, spawnPlainNode } from '../core/endpoint/plain-node.js';
import { fakeClock } from '../helpers/fake-clock.js';
import { TYPESCRIPT_LOADER } from '../helpers/typescript-loader.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';
import { PROJECT_ROOT } from '../process/spawn-daemon.js';

/** A short directory (socket paths stay under 108 bytes), removed afterwards. */
function tempDir(t: Test): string {
  const dir = mkdtempSync('/tmp/mc-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the connect probe outside the test runner's hooks and returns the line it printed. */
async function probe(
  mode: 'launch' | 'connect',
  home: string,
  socket: string,
): Promise<Record<string, unknown>> {
  const child = spawn(
    'env',
    [
      ...WITHOUT_TEST_HOOKS,
      '--import',
      TYPESCRIPT_LOADER,
      'test/client/fixtures/connect-probe.ts',
      mode,
      home,
      socket,
    ],
    { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  await once(child, 'close');
  return JSON.parse(stdout) as Record<string, unknown>;
}

t.test('with no daemon on the socket, one is launched and the next client uses it', async (t) => {
  const dir = tempDir(t);
  const result = await probe('launch', join(dir, 'home'), join(dir, 'magid.sock'));
  t.match(result, { launched: true, secondLaunched: false, sameDaemon: true, socketAfterStop: false });
  t.notOk(isAlive(result.pid as number), 'stop waited for the daemon to exit');
});

t.test(
  'a stale socket left by a killed daemon is replaced by the launched daemon, not by the client',
  async (t) => {
    const dir = tempDir(t);
    const socket = join(dir, 'magid.sock');
    execFileSync('python3', [
      '-c',
      'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
      socket,
    ]);
    t.ok(existsSync(socket), 'a socket nobody listens on');
    t.match(await probe('launch', join(dir, 'home'), socket), { launched: true, sameDaemon: true });
  },
);

t.test(
  'without launch, a missing daemon is a NoDaemonError naming the socket, and nothing is created',
  async (t) => {
    const dir = tempDir(t);
    const home = join(dir, 'home');
    const socket = join(dir, 'magid.sock');
    t.same(await probe('connect', home, socket), {
      error: 'NoDaemonError',
      code: null,
      reason: null,
      message: `no daemon is listening at ${socket}: start \`magid serve\` or pass \`launch: true\``,
      homeCreated: false,
    });
  },
);

t.test('a daemon that exits before its ready line is a LaunchError', async (t) => {
  const dir = tempDir(t);
  const shared = join(dir, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o777);
  t.match(await probe('launch', join(dir, 'home'), join(shared, 'magid.sock')), {
    error: 'LaunchError',
    reason: 'exited',
  });
});

t.test('a daemon not ready within the ready timeout is stopped and reported', async (t) => {
  const dir = tempDir(t);
  const clock = fakeClock();
  const launching = launchDaemon({
    home: join(dir, 'home'),
    socket: join(dir, 'magid.sock'),
    readyTimeoutMs: 1_000,
    clock,
  });
  let settled = false;
  launching.catch(() => {}).finally(() => (settled = true));
  clock.advance(999);
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(settled, 'still waiting 1 ms before the timeout');
  clock.advance(1);
  const error = await launching.catch((caught: unknown) => caught);
  t.ok(error instanceof LaunchError);
  t.equal((error as LaunchError).reason, 'timed_out');
});

t.test('a daemon of another user on the socket is refused, and none is launched in its place', async (t) => {
  t.equal(process.getuid?.(), 0, 'this test runs as root, to start a server as nobody');
  const dir = tempDir(t);
  chmodSync(dir, 0o777);
  const socket = join(dir, 'other.sock');
  const server = spawnPlainNode(
    `const s=require('net').createServer(c=>c.end());s.listen(process.argv[1],()=>console.log('up'))`,
    [socket],
    { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.teardown(() => server.kill('SIGKILL'));
  t.equal(await firstLine(server), 'up');
  const home = join(dir, 'home');
  await t.rejects(MagiClient.connect({ home, socket, launch: true }), /another user/);
  t.notOk(existsSync(home), 'nothing was launched');
});
