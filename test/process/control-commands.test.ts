import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runMagid, shortTempDir, startDaemon } from './spawn-daemon.js';

t.test('magid status and magid stop talk to the running daemon over its socket', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const daemon = await startDaemon(t, { socket, home: join(root, 'home') });

  t.test('status prints the daemon status and exits 0', async (t) => {
    const status = runMagid(t, ['status', '--socket', socket]);
    t.strictSame(await status.waitExit(), { code: 0, signal: null });
    const lines = status.stdout.trimEnd().split('\n');
    t.equal(lines.length, 1, 'one line');
    t.match(JSON.parse(lines[0]!), {
      running: true,
      pid: daemon.ready.pid,
      instance_id: daemon.ready.instance_id,
      status: { ready: false, provider: { configured: false }, sessions: 0, active_turns: 0 },
    });
    t.ok(daemon.magid.running, 'the daemon keeps running');
  });

  t.test('stop makes the daemon drain and exit 0', async (t) => {
    const stop = runMagid(t, ['stop', '--socket', socket]);
    t.strictSame(await stop.waitExit(), { code: 0, signal: null });
    t.strictSame(JSON.parse(stop.stdout), { stopped: true, pid: daemon.ready.pid });
    t.strictSame(await daemon.magid.waitExit(), { code: 0, signal: null }, 'the daemon exited 0');
    t.notOk(existsSync(socket), 'its socket is gone');
  });

  t.test('status with nothing at the socket path says so and exits 1', async (t) => {
    const status = runMagid(t, ['status', '--socket', socket]);
    t.strictSame(await status.waitExit(), { code: 1, signal: null });
    t.equal(status.stdout, '{"running":false}\n');
  });
});
