import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import t from 'tap';
import { connectSocket } from '../../client/wire-client.js';
import { claimedSession } from '../helpers/daemon.js';
import { shortTempDir, startDaemon } from './spawn-daemon.js';

interface HttpAnswer {
  status: number;
  contentType: string | undefined;
  body: string;
}

const HTTP_TIMEOUT_MS = 3_000;

/** One plain HTTP request over the Unix socket, as `curl --unix-socket` would send it. */
function httpOverSocket(
  socketPath: string,
  method: string,
  path: string,
  body?: string,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ socketPath, method, path, headers: { host: 'x' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          body: text,
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.setTimeout(HTTP_TIMEOUT_MS, () =>
      outgoing.destroy(new Error(`no HTTP answer to ${method} ${path} within ${HTTP_TIMEOUT_MS} ms`)),
    );
    if (body !== undefined) {
      outgoing.setHeader('content-type', 'application/json');
      outgoing.end(body);
    } else outgoing.end();
  });
}

t.test('--debug-http serves read-only counts and health on the daemon socket', async (t) => {
  const root = shortTempDir(t);
  const home = join(root, 'home');
  const socket = join(root, 'd.sock');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const { ready } = await startDaemon(t, { socket, home, args: ['--debug-http'] });

  const { client } = await connectSocket(socket);
  await client.initialize([]);
  const claimed = await claimedSession(client, workspace);

  const health = await httpOverSocket(socket, 'GET', '/debug/health');
  t.equal(health.status, 200);
  t.match(health.contentType, /^application\/json/);
  t.match(JSON.parse(health.body), { ok: true, instance_id: ready.instance_id, uptime_ms: Number });

  const counts = await httpOverSocket(socket, 'GET', '/debug/counts');
  t.equal(counts.status, 200);
  t.match(JSON.parse(counts.body), {
    connections: 1,
    requests_in_flight: 0,
    sessions: 1,
    claimed_sessions: 1,
    retained_operations: Number,
    executors: 0,
    registries: 0,
    retained_entries: 0,
    retained_snapshots: 0,
    retained_bytes: 0,
    capture_slot_busy: false,
  });
  for (const [what, secret] of [
    ['control token', claimed.control],
    ['socket path', socket],
    ['home path', home],
    ['workspace path', workspace],
    ['temporary directory', root],
  ] as const) {
    t.notOk(counts.body.includes(secret) || health.body.includes(secret), `no ${what}`);
  }

  for (const [method, path, body] of [
    ['POST', '/session.create', JSON.stringify({ workspace, title: null })],
    ['GET', '/initialize', undefined],
    ['POST', '/initialize', JSON.stringify({})],
    ['POST', '/status', JSON.stringify({})],
    ['GET', '/status', undefined],
    ['POST', '/debug/counts', JSON.stringify({})],
    ['GET', '/debug/../initialize', undefined],
    ['GET', '/debug/%2e%2e/session.list', undefined],
  ] as const) {
    const answer = await httpOverSocket(socket, method, path, body);
    t.equal(answer.status, 404, `${method} ${path} is not found`);
  }
  const afterRefusals = JSON.parse((await httpOverSocket(socket, 'GET', '/debug/counts')).body);
  t.equal(afterRefusals.sessions, 1, 'no session was created over HTTP');

  t.equal((await client.call('status')).sessions, 1, 'the wire client is served alongside');
  client.close();
});

t.test('without --debug-http an HTTP request is answered as the wire answers any non-frame', async (t) => {
  const root = shortTempDir(t);
  const socket = join(root, 'd.sock');
  const { ready } = await startDaemon(t, { socket, home: join(root, 'home') });

  const { client } = await connectSocket(socket);
  client.sendRaw('GET /debug/health HTTP/1.1\n');
  const refusal = await client.nullResponse();
  t.strictSame(refusal, {
    type: 'response',
    id: null,
    instance_id: ready.instance_id,
    ok: false,
    error: { code: 'invalid_request', message: refusal.error?.message },
  });
  t.type(refusal.error?.message, 'string');

  const init = await client.initialize([]);
  t.equal(init.instance_id, ready.instance_id, 'the same connection keeps serving');
  t.type((await client.call('status')).sessions, 'number');
  t.equal(client.received.length, 3, 'one answer per line, nothing else');
  client.close();
});
