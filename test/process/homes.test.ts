import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import t, { type Test } from 'tap';
import { MagiClient } from '../../client/index.js';
import { daemonRecordPath } from '../../config/daemon-record.js';
import { homeId } from '../../core/endpoint/home-identity.js';
import { runMagid, shortTempDir, startDaemon } from './spawn-daemon.js';

// Several daemons start from the TypeScript sources.
t.setTimeout(120_000);

/** The client library reads XDG_RUNTIME_DIR from this process's environment, as an application's would. */
function withRuntimeDirectory(t: Test, runtime: string): void {
  const before = process.env.XDG_RUNTIME_DIR;
  process.env.XDG_RUNTIME_DIR = runtime;
  t.teardown(() => {
    if (before === undefined) delete process.env.XDG_RUNTIME_DIR;
    else process.env.XDG_RUNTIME_DIR = before;
  });
}

t.test(
  'two homes with XDG_RUNTIME_DIR set run two daemons side by side, each found by its own home',
  async (t) => {
    const root = shortTempDir(t);
    const runtime = join(root, 'xdg');
    const env = { XDG_RUNTIME_DIR: runtime };
    const homes = [join(root, 'a'), join(root, 'b')];
    const daemons = [];
    for (const home of homes) daemons.push(await startDaemon(t, { socket: null, home, env }));
    t.not(daemons[0]!.ready.socket, daemons[1]!.ready.socket, 'each home has its own socket');
    for (const [index, home] of homes.entries()) {
      t.equal(daemons[index]!.ready.socket, join(runtime, 'magi', `magid-${homeId(home)}.sock`));
    }

    withRuntimeDirectory(t, runtime);
    for (const [index, home] of homes.entries()) {
      const client = await MagiClient.connect({ home });
      t.equal(client.initialized.home_id, homeId(home), `a client of home ${index} reached its own daemon`);
      t.equal(client.initialized.instance_id, daemons[index]!.ready.instance_id);
      client.close();

      const status = runMagid(t, ['status', '--home', home], env);
      t.strictSame(await status.waitExit(), { code: 0, signal: null });
      t.equal(
        JSON.parse(status.stdout).pid,
        daemons[index]!.ready.pid,
        `magid status --home finds daemon ${index}`,
      );
    }
  },
);

t.test('a daemon on a socket of its own is found through <home>/run/daemon.json', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'elsewhere', 'd.sock');
  const daemon = await startDaemon(t, { socket, home });
  const record = daemonRecordPath(home);
  // Written just after the ready line.
  for (let tries = 0; !existsSync(record) && tries < 500; tries++)
    await new Promise((r) => setTimeout(r, 10));
  t.strictSame(JSON.parse(readFileSync(record, 'utf8')), {
    pid: daemon.ready.pid,
    socket,
    instance_id: daemon.ready.instance_id,
    home_id: homeId(home),
  });
  t.equal(statSync(record).mode & 0o777, 0o600, 'the record is private');

  const status = runMagid(t, ['status', '--home', home]);
  t.strictSame(await status.waitExit(), { code: 0, signal: null });
  t.match(JSON.parse(status.stdout), {
    running: true,
    pid: daemon.ready.pid,
    status: { home_id: homeId(home) },
  });

  const client = await MagiClient.connect({ home });
  t.equal(
    client.initialized.instance_id,
    daemon.ready.instance_id,
    'the client library finds it the same way',
  );
  client.close();

  const stop = runMagid(t, ['stop', '--home', home]);
  t.strictSame(await stop.waitExit(), { code: 0, signal: null });
  t.strictSame(await daemon.magid.waitExit(), { code: 0, signal: null }, 'magid stop --home stopped it');
  t.notOk(existsSync(record), 'the record is removed at stop');
});

t.test('a record left by a killed daemon is ignored and replaced', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const first = await startDaemon(t, { socket: join(root, 'one.sock'), home });
  const record = daemonRecordPath(home);
  for (let tries = 0; !existsSync(record) && tries < 500; tries++)
    await new Promise((r) => setTimeout(r, 10));
  first.magid.child.kill('SIGKILL');
  await first.magid.waitExit();
  t.ok(existsSync(record), 'SIGKILL leaves the record behind');

  const status = runMagid(t, ['status', '--home', home]);
  t.strictSame(await status.waitExit(), { code: 1, signal: null });
  t.equal(status.stdout, '{"running":false}\n', 'a dead pid is not a running daemon');

  const second = await startDaemon(t, { socket: join(root, 'two.sock'), home });
  for (let tries = 0; tries < 500; tries++) {
    if (readFileSync(record, 'utf8').includes(second.ready.instance_id)) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  t.match(JSON.parse(readFileSync(record, 'utf8')), {
    pid: second.ready.pid,
    socket: join(root, 'two.sock'),
  });
});

t.test('a daemon of another home at the socket asked for is refused, and never signalled', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const other = await startDaemon(t, { socket, home: join(root, 'other') });
  const mine = join(root, 'mine');

  const status = runMagid(t, ['status', '--home', mine, '--socket', socket]);
  t.strictSame(await status.waitExit(), { code: 1, signal: null });
  t.equal(status.stdout, '{"running":false}\n');
  t.match(status.stderr, 'serves another home');

  const stop = runMagid(t, ['stop', '--home', mine, '--socket', socket]);
  t.strictSame(await stop.waitExit(), { code: 1, signal: null });
  t.ok(other.magid.running, 'magid stop left the other home’s daemon running');

  await t.rejects(
    MagiClient.connect({ home: mine, socket }),
    { code: 'another_home' },
    'the client refuses it',
  );
  const plain = runMagid(t, ['status', '--socket', socket]);
  t.strictSame(
    await plain.waitExit(),
    { code: 0, signal: null },
    'a socket alone names whichever daemon is there',
  );
});

t.test(
  'a clean stop leaves nothing in $XDG_RUNTIME_DIR/magi; a killed daemon leaves its lock file, which the next one takes',
  async (t) => {
    const root = shortTempDir(t);
    const runtime = join(root, 'xdg');
    const env = { XDG_RUNTIME_DIR: runtime };
    const home = join(root, 'home');
    const folder = join(runtime, 'magi');
    const socket = join(folder, `magid-${homeId(home)}.sock`);

    const first = await startDaemon(t, { socket: null, home, env });
    t.equal(first.ready.socket, socket);
    t.same(readdirSync(folder).sort(), [basename(socket), `${basename(socket)}.lock`], 'while it serves');
    first.magid.child.kill('SIGTERM');
    t.strictSame(await first.magid.waitExit(), { code: 0, signal: null });
    t.same(readdirSync(folder), [], 'a clean stop removes the socket and its lock file');

    const killed = await startDaemon(t, { socket: null, home, env });
    killed.magid.child.kill('SIGKILL');
    await killed.magid.waitExit();
    t.ok(
      existsSync(`${socket}.lock`),
      'SIGKILL leaves the lock file (the lock itself died with the process)',
    );

    const next = await startDaemon(t, { socket: null, home, env });
    t.equal(next.ready.socket, socket, 'the next daemon takes the name');
    const stop = runMagid(t, ['stop', '--home', home], env);
    t.strictSame(await stop.waitExit(), { code: 0, signal: null });
    await next.magid.waitExit();
    t.same(readdirSync(folder), [], 'and leaves nothing when it stops');
  },
);
