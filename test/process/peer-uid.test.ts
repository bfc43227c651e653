import { spawn } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { logLines, MagidProcess, shortTempDir, startDaemon } from './spawn-daemon.js';

const NOBODY = 65_534;

/** Connects, sends an initialize frame, and prints what happened as one JSON line. */
const NOBODY_CLIENT = `
const socket = require('node:net').connect(process.argv[1]);
let connected = false;
let received = '';
const report = (end) => {
  console.log(JSON.stringify({ connected, received, end }));
  process.exit(0);
};
socket.on('connect', () => {
  connected = true;
  socket.write(JSON.stringify({ type: 'request', id: 'r1', method: 'initialize', session_id: null,
    control_token: null, operation_id: null,
    payload: { wire: 2, client: { name: 'nobody', version: '1' }, requested_capabilities: [] } }) + '\\n');
});
socket.on('data', (chunk) => { received += chunk.toString('utf8'); });
socket.on('error', (error) => report(error.code));
socket.on('close', () => report('closed'));
setTimeout(() => report('still open'), 5000);
`;

t.test('a client of another user is closed unanswered while the daemon’s user is served', async (t) => {
  t.equal(process.getuid?.(), 0, 'this test must run as root to connect as nobody');
  if (process.getuid?.() !== 0) return;

  const root = shortTempDir(t);
  const socket = join(root, 'run', 'd.sock');
  const { magid, ready } = await startDaemon(t, { socket, home: join(root, 'home') });

  const { client: before } = await connectSocket(socket);
  t.equal((await before.initialize([])).instance_id, ready.instance_id, 'served before');

  // Open the file modes so that only the peer check can refuse nobody.
  chmodSync(root, 0o755);
  chmodSync(join(root, 'run'), 0o755);
  chmodSync(socket, 0o666);

  const nobody = new MagidProcess(
    spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '-e', NOBODY_CLIENT, socket], {
      uid: NOBODY,
      gid: NOBODY,
      cwd: '/',
      env: {},
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  t.teardown(() => {
    if (nobody.running) nobody.child.kill('SIGKILL');
  });
  t.strictSame(await nobody.waitExit(), { code: 0, signal: null }, `nobody's client ran: ${nobody.stderr}`);
  const seen = JSON.parse(nobody.stdout) as { connected: boolean; received: string; end: string };
  t.comment(`nobody's connection ended with: ${seen.end}`);
  t.equal(seen.connected, true, 'the connect itself succeeded (the file modes allowed it)');
  t.equal(seen.received, '', 'not one byte was answered');
  t.not(seen.end, 'still open', 'the daemon closed the connection');

  t.type((await before.call('status')).sessions, 'number', 'the client already open is still served');
  const { client: after } = await connectSocket(socket);
  t.equal((await after.initialize([])).instance_id, ready.instance_id, 'a new client of the user is served');
  t.type((await after.call('status')).sessions, 'number');
  before.close();
  after.close();
  const refusals = logLines(magid.stderr).filter((line) => line.msg === 'connection refused');
  t.same(
    refusals.map((line) => line.reason),
    ['peer_uid'],
    'the refusal is logged with its reason',
  );
});
