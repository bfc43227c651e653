import { PassThrough, Writable } from 'node:stream';
import t from 'tap';
import { WireClient } from '../../client/wire-client.js';
import type { Connection } from '../../core/connections/connection.js';
import { op, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { heldRoute } from '../helpers/held-route.js';

/** What an output was asked to write: one entry per physical write, each the chunks it carried. */
type Writes = string[][];

/** A connection served over a fresh input and `output`, with a client writing to that input. */
function serveOver(daemon: TestDaemon, output: Writable): { client: WireClient; connection: Connection } {
  const input = new PassThrough();
  const client = new WireClient({ write: (line) => input.write(line), end: () => input.end() });
  const connection = daemon.app.framing.serve({ input, output, offersProfile: false });
  return { client, connection };
}

/** An output that hands every frame to `client` and records its physical writes. */
function recordingOutput(client: () => WireClient, writes: Writes): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push([chunk.toString()]);
      client().receive(chunk);
      callback();
    },
    writev(chunks, callback) {
      writes.push(chunks.map(({ chunk }) => String(chunk)));
      for (const { chunk } of chunks) client().receive(chunk as Buffer);
      callback();
    },
  });
}

function epipe(): Error {
  return Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
}

t.test('a connection lives as long as its output, not its input', async (t) => {
  const held = heldRoute();
  const daemon = await startDaemon(t, { setup: held.setup });
  const writes: Writes = [];
  let client: WireClient | undefined;
  const served = serveOver(
    daemon,
    recordingOutput(() => client!, writes),
  );
  client = served.client;
  await client.initialize([]);
  const answer = client.request('test.hold');
  await held.started;
  let settled = false;
  const settling = daemon.app.framing.settled().then(() => (settled = true));
  client.close();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(served.connection.closed, false, 'the end of the input does not close the connection');
  t.equal(settled, false, 'settled() waits for the request in flight');
  held.release();
  t.same((await answer).result, { held: true }, 'a request read before the end is still answered');
  await settling;
  t.equal(daemon.app.framing.inFlight, 0, 'settled() resolves once nothing is in flight');
});

t.test('the frames of one tick leave in one write, each frame whole', async (t) => {
  const daemon = await startDaemon(t);
  const writes: Writes = [];
  let client: WireClient | undefined;
  client = serveOver(
    daemon,
    recordingOutput(() => client!, writes),
  ).client;
  await client.initialize([]);
  writes.length = 0;
  // `capabilities` is answered from memory, so all of them are answered within one tick.
  const pipelined = 20;
  const lines = Array.from({ length: pipelined }, (_, i) =>
    JSON.stringify({
      type: 'request',
      id: `s${i}`,
      method: 'capabilities',
      session_id: null,
      control_token: null,
      operation_id: null,
      payload: {},
    }),
  );
  client.sendRaw(`${lines.join('\n')}\n`);
  const answers = await Promise.all(lines.map((_, i) => client!.response(`s${i}`)));
  t.ok(
    answers.every((answer) => answer.ok),
    'every request is answered',
  );
  const chunks = writes.flat();
  t.equal(chunks.length, pipelined, 'one chunk per frame');
  t.ok(
    chunks.every((chunk) => chunk.endsWith('\n') && chunk.indexOf('\n') === chunk.length - 1),
    'each chunk is exactly one frame and its newline',
  );
  t.ok(
    chunks.every((chunk) => JSON.parse(chunk).type === 'response'),
    'each frame was encoded whole before its write',
  );
  t.ok(writes.length < pipelined, `the answers were batched (${writes.length} writes for ${pipelined})`);
});

t.test('an output that fails closes the connection and is never written again', async (t) => {
  const daemon = await startDaemon(t);
  let attempts = 0;
  const output = new Writable({
    write(_chunk, _encoding, callback) {
      attempts++;
      callback(epipe());
    },
  });
  const { client, connection } = serveOver(daemon, output);
  const closed = new Promise<void>((resolve) => connection.onClose(() => resolve()));
  client.send('initialize', { wire: 2, client: { name: 'c', version: '1' }, requested_capabilities: [] });
  await closed;
  t.equal(attempts, 1, 'the first write failed');
  t.notOk(daemon.app.framing.connections.has(connection), 'the connection is gone');

  client.send('session.create', { workspace: daemon.workspace, title: null }, { operation: op() });
  client.send('status');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(attempts, 1, 'nothing more is written to it');
  t.equal(daemon.app.framing.inFlight, 0, 'nothing read after the failure runs');
  const observer = await daemon.connect('in-process', []);
  const list = await observer.call('session.list', { cursor: null, limit: 10 });
  t.same(list.sessions, [], 'a mutation read after the failure changed nothing');
});
