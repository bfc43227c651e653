import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket, WireClient } from '../../client/wire-client.js';
import { firstLine, spawnPlainNode } from '../core/endpoint/plain-node.js';

t.test('the client refuses a daemon that runs as another user', async (t) => {
  t.equal(process.getuid?.(), 0, 'this test runs as root, to start a server as nobody');
  const dir = mkdtempSync(join(tmpdir(), 'magid-client-'));
  chmodSync(dir, 0o777);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'other.sock');
  const server = spawnPlainNode(
    `const s=require('net').createServer(c=>c.end('{"type":"response"}\\n'));s.listen(process.argv[1],()=>console.log('up'))`,
    [path],
    { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  t.teardown(() => server.kill('SIGKILL'));
  t.equal(await firstLine(server), 'up');
  await t.rejects(connectSocket(path), /another user/);
});

t.test('the client accepts a daemon of its own user and reports its pid', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'magid-client-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'own.sock');
  const server = createServer((socket) => socket.end());
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.teardown(() => server.close());
  const { client, daemonPid, socket } = await connectSocket(path);
  t.equal(daemonPid, process.pid);
  t.type(client, WireClient);
  socket.destroy();
});

t.test('frames are sorted into responses, id-less responses and events', async (t) => {
  const written: string[] = [];
  const client = new WireClient({ write: (line) => written.push(line), end: () => {} });
  const id = client.send('status', {}, { id: 'r1' });
  t.same(JSON.parse(written[0]!), {
    type: 'request',
    id: 'r1',
    method: 'status',
    session_id: null,
    control_token: null,
    operation_id: null,
    payload: {},
  });
  const answer = client.response(id);
  client.receive(
    '{"type":"event","event":"e","session_id":null,"operation_id":null,"grant_generation":null,"sequence":null,"payload":{}}\n{"type":"response","id":null,"instance_id":"i","ok":false,"error":{"code":"invalid_request","message":"m"}}\n',
  );
  client.receive('{"type":"response","id":"r1","instance_id":"i","ok":true,"result":{"a":1}}\n');
  t.same((await answer).result, { a: 1 });
  t.equal((await client.nullResponse()).error?.code, 'invalid_request');
  t.equal((await client.event('e')).event, 'e');
  client.closedByPeer();
  await t.rejects(client.response('never'), /closed/);
});

const EVENT = (name: string) =>
  `{"type":"event","event":"${name}","session_id":null,"operation_id":null,"grant_generation":null,"sequence":null,"payload":{}}\n`;

t.test('event listeners take events before the queue; close listeners hear the close once', async (t) => {
  const client = new WireClient({ write: () => {}, end: () => {} });
  const taken: string[] = [];
  const stop = client.onEvent((frame) => {
    taken.push(frame.event);
    return frame.event === 'mine';
  });
  client.receive(EVENT('mine') + EVENT('other'));
  t.same(taken, ['mine', 'other'], 'the listener saw both');
  t.same(
    client.pendingEvents.map((frame) => frame.event),
    ['other'],
    'only the event it left was queued',
  );
  stop();
  client.receive(EVENT('mine'));
  t.equal(client.pendingEvents.length, 2, 'a removed listener takes nothing');
  let closes = 0;
  client.onClose(() => closes++);
  client.closedByPeer();
  client.closedByPeer();
  t.equal(closes, 1);
});

t.test('without history, nothing is kept of frames or events nobody took', async (t) => {
  const client = new WireClient({ write: () => {}, end: () => {} }, { keepHistory: false });
  client.receive(EVENT('e'));
  t.same(client.received, []);
  t.same(client.pendingEvents, []);
  const waiting = client.event('e');
  client.receive(EVENT('e'));
  t.equal((await waiting).event, 'e', 'an event awaited before it arrives is still delivered');
});
