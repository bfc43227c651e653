import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { shortTempDir, startDaemon, startStdio } from './spawn-daemon.js';

// Two daemons start from the TypeScript sources.
t.setTimeout(120_000);

/** About 10 KB: 5,000 levels of arrays in the payload of a request sent before `initialize`. */
const DEEP_LINE = `{"type":"request","id":"deep","method":"initialize","session_id":null,"control_token":null,"operation_id":null,"payload":${'['.repeat(5_000)}${']'.repeat(5_000)}}\n`;

async function refusesThenServes(t: Test, client: WireClient, running: () => boolean): Promise<void> {
  client.sendRaw(DEEP_LINE);
  t.match(await client.response('deep'), { ok: false, error: { code: 'invalid_request' } });
  t.equal((await client.initialize([])).wire, 2, 'the same connection then initializes');
  t.equal((await client.request('status')).ok, true, 'and is served');
  t.ok(running(), 'the daemon is still running');
}

t.test('magid serve answers a deeply nested line before initialize and keeps running', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const { magid } = await startDaemon(t, { socket, home: join(root, 'home') });
  const { client } = await connectSocket(socket);
  await refusesThenServes(t, client, () => magid.running);
  client.close();
  magid.child.kill('SIGTERM');
  t.same(await magid.waitExit(), { code: 0, signal: null });
});

t.test('magid stdio answers it too and exits 0 at the end of its input', async (t) => {
  const { magid, client } = await startStdio(t, { home: join(shortTempDir(t), 'home') });
  await refusesThenServes(t, client, () => magid.running);
  client.close();
  t.same(await magid.waitExit(), { code: 0, signal: null });
});
