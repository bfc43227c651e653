import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { SERVICE_LIMITS } from '../../core/limits.js';
import { startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { heldRoute } from '../helpers/held-route.js';

for (const transport of [...TRANSPORTS, 'stdio'] as const) {
  t.test(`framing (${transport})`, async (t) => {
    const held = heldRoute();
    const daemon = await startDaemon(t, { setup: held.setup });

    t.test('a line over 65,536 bytes is discarded and answered limit_exceeded with id null', async (t) => {
      const client = await daemon.connect(transport);
      const padding = 'x'.repeat(65_536);
      client.sendRaw(`{"type":"request","id":"big","method":"status","pad":"${padding}"}\n`);
      const refused = await client.nullResponse();
      t.equal(refused.error?.code, 'limit_exceeded');
      t.equal(refused.id, null);
      t.equal((await client.request('status')).ok, true, 'the connection keeps serving');
    });

    t.test('a line of exactly 65,536 bytes is read whole', async (t) => {
      const client = await daemon.connect(transport);
      const frame = {
        type: 'request',
        id: 'edge',
        method: 'status',
        session_id: null,
        control_token: null,
        operation_id: null,
        payload: {},
      };
      const base = JSON.stringify(frame);
      const line = `${' '.repeat(65_536 - base.length)}${base}`;
      t.equal(Buffer.byteLength(line), 65_536);
      client.sendRaw(`${line}\n`);
      t.equal((await client.response('edge')).ok, true);
    });

    t.test('a payload over 32,768 bytes encoded is limit_exceeded with its id', async (t) => {
      const client = await daemon.connect(transport);
      const over = await client.request('session.list', { cursor: null, limit: 1, pad: 'y'.repeat(32_768) });
      t.equal(over.error?.code, 'limit_exceeded');
      const under = await client.request('session.list', { cursor: null, limit: 1, pad: 'y'.repeat(32_700) });
      t.equal(under.error?.code, 'invalid_payload', 'a payload under the limit reaches validation');
    });

    t.test('garbage, non-objects and malformed envelopes are invalid_request', async (t) => {
      const client = await daemon.connect(transport);
      for (const line of ['not json', '[1,2]', '"text"', 'null', '{"id":"a"', '\xff\xfe']) {
        client.sendRaw(`${line}\n`);
        const refused = await client.nullResponse();
        t.equal(refused.error?.code, 'invalid_request', `${JSON.stringify(line)} refused`);
      }
      const base = {
        type: 'request',
        method: 'status',
        session_id: null,
        control_token: null,
        operation_id: null,
        payload: {},
      };
      const malformed: Array<[string, Record<string, unknown>]> = [
        ['m1', { ...base, id: 'm1', extra: 1 }],
        ['m2', { ...base, id: 'm2', type: 'response' }],
        ['m3', { ...base, id: 'm3', payload: [] }],
        ['m4', { ...base, id: 'm4', session_id: 'has space' }],
        ['m5', { ...base, id: 'm5', method: 7 }],
        ['m6', { ...base, id: 'm6', operation_id: '' }],
      ];
      for (const [id, frame] of malformed) {
        client.sendRaw(`${JSON.stringify(frame)}\n`);
        const refused = await client.response(id);
        t.equal(refused.error?.code, 'invalid_request', `${id} refused with its id`);
      }
      const { payload: _payload, ...missing } = { ...base, id: 'm7' };
      client.sendRaw(`${JSON.stringify(missing)}\n`);
      t.equal((await client.response('m7')).error?.code, 'invalid_request');
      client.sendRaw(`${JSON.stringify({ ...base, id: 'bad id!' })}\n`);
      t.equal(
        (await client.nullResponse()).error?.code,
        'invalid_request',
        'an unsafe id is answered with id null',
      );
      t.equal((await client.request('status')).ok, true, 'the connection keeps serving');
    });

    t.test('empty lines are ignored', async (t) => {
      const client = await daemon.connect(transport);
      client.sendRaw('\n\n   \n');
      const answer = await client.request('status');
      t.equal(answer.ok, true);
      t.equal(client.received.length, 2, 'only initialize and status were answered');
    });

    t.test('a member null or set against the method is invalid_request', async (t) => {
      const client = await daemon.connect(transport);
      t.equal((await client.request('status', {}, { operation: 'op-x' })).error?.code, 'invalid_request');
      t.equal(
        (await client.request('session.create', { workspace: daemon.workspace, title: null })).error?.code,
        'invalid_request',
      );
      t.equal(
        (await client.request('session.claim', {}, { operation: 'op-y' })).error?.code,
        'invalid_request',
      );
    });

    t.test('an unknown method is unknown_method', async (t) => {
      const client = await daemon.connect(transport);
      t.equal((await client.request('no.such_method')).error?.code, 'unknown_method');
    });

    t.test('a duplicate in-flight id is refused and the original still completes', async (t) => {
      const client = await daemon.connect(transport);
      client.send('test.hold', {}, { id: 'same' });
      await held.started;
      client.send('status', {}, { id: 'same' });
      const duplicate = await client.response('same');
      t.equal(duplicate.error?.code, 'duplicate_request_id');
      t.equal(daemon.app.framing.inFlight, 1, 'the original keeps its reservation');
      client.send('status', {}, { id: 'same' });
      t.equal((await client.response('same')).error?.code, 'duplicate_request_id', 'still reserved');
      held.release();
      const original = await client.response('same');
      t.equal(original.ok, true);
      t.same(original.result, { held: true });
      t.equal((await client.request('status', {}, { id: 'same' })).ok, true, 'the id is free once answered');
    });

    t.test('a bug answers internal_error with fixed text', async (t) => {
      const client = await daemon.connect(transport);
      const failed = await client.request('test.fail');
      t.same(failed.error, { code: 'internal_error', message: 'internal error' });
      t.notMatch(JSON.stringify(failed), /secret/);
    });

    t.test('responses carry the instance id', async (t) => {
      const client = await daemon.connect(transport);
      const answer = await client.request('status');
      t.equal(answer.instance_id, daemon.app.instanceId);
      t.equal(answer.type, 'response');
    });
  });
}

t.test('draining answers in-flight requests and refuses new ones with shutting_down', async (t) => {
  const held = heldRoute();
  const daemon = await startDaemon(t, { setup: held.setup });
  const client = await daemon.connect('socket');
  const inFlight = client.request('test.hold');
  await held.started;
  const closing = daemon.app.close();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal((await client.request('status')).error?.code, 'shutting_down');
  held.release();
  t.equal((await inFlight).ok, true, 'the in-flight request is answered');
  await closing;
});

t.test('a reader that stops reading is paused, not buffered without bound', async (t) => {
  const daemon = await startDaemon(t);
  const { client, socket } = await connectSocket(await daemon.socketPath());
  t.teardown(() => socket.destroy());
  await client.initialize();
  const [connection] = daemon.app.framing.connections;
  socket.pause();
  const requests = 8000;
  const lines: string[] = [];
  for (let i = 0; i < requests; i++) {
    lines.push(
      JSON.stringify({
        type: 'request',
        id: `p${i}`,
        method: 'capabilities',
        session_id: null,
        control_token: null,
        operation_id: null,
        payload: {},
      }),
    );
  }
  socket.write(`${lines.join('\n')}\n`);
  const deadline = Date.now() + 10_000;
  while (!connection!.outbound.congested && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(connection!.outbound.congested, 'the daemon stopped reading from the slow reader');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const queued = connection!.outbound.queuedBytes;
  // Past the soft bound the daemon reads no more; what it holds is the soft bound plus the answers to the
  // last chunk it had read, far below the hard bound at which it would disconnect.
  t.ok(
    queued < SERVICE_LIMITS.outbound_hard_bytes / 2,
    `what the daemon holds stays bounded (${queued} bytes)`,
  );
  t.equal(connection!.closed, false);
  socket.resume();
  const answers = await Promise.all(lines.map((_, i) => client.response(`p${i}`, 30_000)));
  t.equal(
    answers.filter((answer) => answer.ok).length,
    requests,
    'every request is answered once the reader reads',
  );
});
