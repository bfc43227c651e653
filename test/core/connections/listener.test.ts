import { EventEmitter, once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { createListener, type Listener, type RefusalReason } from '../../../core/connections/listener.js';
import { fakeClock } from '../../helpers/fake-clock.js';

const LIMIT = 2;
const INSTANCE = 'inst_listener_test';

const dir = mkdtempSync(join(tmpdir(), 'magi-listener-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

interface Harness {
  listener: Listener;
  path: string;
  clock: ReturnType<typeof fakeClock>;
  /** Daemon-side sockets handed to the wire, in order. */
  wire: Socket[];
  /** Daemon-side sockets handed to HTTP, with `http: true`. */
  http: Socket[];
  refusals: RefusalReason[];
  /** Emits `refused` with the reason of each refusal. */
  refused: EventEmitter;
}

let sockets = 0;

/** A listener with a small limit whose wire echoes every line back (and HTTP too, prefixed). */
async function listen(t: Test, options: { http?: boolean } = {}): Promise<Harness> {
  const clock = fakeClock();
  const wire: Socket[] = [];
  const http: Socket[] = [];
  const refusals: RefusalReason[] = [];
  const refused = new EventEmitter();
  const listener = createListener(
    {
      wire: (socket) => {
        wire.push(socket);
        socket.on('error', () => {});
        socket.on('data', (bytes) => socket.write(bytes));
        socket.resume();
      },
      ...(options.http
        ? {
            http: (socket: Socket) => {
              http.push(socket);
              socket.on('error', () => {});
              socket.on('data', (bytes) => socket.write(`http ${bytes}`));
            },
          }
        : {}),
      refused: (reason) => {
        refusals.push(reason);
        refused.emit('refused', reason);
      },
    },
    { maxConnections: LIMIT, instanceId: INSTANCE, clock },
  );
  sockets++;
  const path = join(dir, `l${sockets}.sock`);
  listener.server.listen(path);
  await once(listener.server, 'listening');
  t.teardown(async () => {
    for (const socket of [...wire, ...http]) socket.destroy();
    await new Promise<void>((resolve) => listener.server.close(() => resolve()));
  });
  return { listener, path, clock, wire, http, refusals, refused };
}

/** What a client saw: every byte until the daemon ended the connection, and how it ended. */
interface Seen {
  received: string;
  end: 'end' | 'error';
}

/** Connects, sends one line, and reads until the daemon ends the connection. */
function connectAndReadToEnd(t: Test, path: string): { socket: Socket; seen: Promise<Seen> } {
  const socket = connect(path);
  t.teardown(() => socket.destroy());
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    received += text;
  });
  socket.write('hello\n');
  const seen = new Promise<Seen>((resolve) => {
    socket.once('end', () => resolve({ received, end: 'end' }));
    socket.once('error', () => resolve({ received, end: 'error' }));
  });
  return { socket, seen };
}

/** The daemon-side sockets the server still holds, served or refused. */
function openSockets(listener: Listener): Promise<number> {
  return new Promise((resolve, reject) =>
    listener.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

/** Open sockets once they come down to `expected`, or as they are after a bounded number of checks. */
async function openSocketsSettled(listener: Listener, expected: number): Promise<number> {
  let count = await openSockets(listener);
  for (let check = 0; check < 100 && count !== expected; check++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    count = await openSockets(listener);
  }
  return count;
}

/** Connects, sends one line and waits for its echo: the connection was served. */
async function served(t: Test, path: string): Promise<Socket> {
  const socket = connect(path);
  t.teardown(() => socket.destroy());
  socket.setEncoding('utf8');
  socket.write('ping\n');
  const [echo] = (await once(socket, 'data')) as [string];
  t.equal(echo, 'ping\n', 'served: the wire echoed');
  return socket;
}

t.test('a same-user connection beyond the limit gets one limit_exceeded frame and then EOF', async (t) => {
  const { listener, path, wire, refusals } = await listen(t);
  for (let index = 0; index < LIMIT; index++) await served(t, path);
  t.equal(listener.served, LIMIT);

  const { seen } = connectAndReadToEnd(t, path);
  const { received, end } = await seen;
  t.equal(end, 'end', 'an orderly end, not a reset');
  const lines = received.split('\n');
  t.equal(lines.length, 2, 'exactly one line');
  t.equal(lines[1], '', 'ending in a newline');
  t.strictSame(JSON.parse(lines[0]!), {
    type: 'response',
    id: null,
    instance_id: INSTANCE,
    ok: false,
    error: {
      code: 'limit_exceeded',
      message: 'the daemon serves as many connections as it can; retry later',
    },
  });
  t.equal(wire.length, LIMIT, 'the refused connection never reached the wire');
  t.equal(listener.served, LIMIT, 'and is not counted');
  t.strictSame(refusals, ['connection_limit']);
  t.equal(
    await openSocketsSettled(listener, LIMIT),
    LIMIT,
    'the refused socket closed with its peer (what the peer sent was read), before any bound',
  );
});

t.test('once a served connection closes, a new one is served again', async (t) => {
  const { listener, path, wire, refusals } = await listen(t);
  const first = await served(t, path);
  await served(t, path);
  const refused = connectAndReadToEnd(t, path);
  t.equal((await refused.seen).end, 'end', 'the third was refused');

  const daemonSide = wire[0]!;
  const gone = once(daemonSide, 'close');
  first.end();
  daemonSide.end();
  await gone;
  t.equal(listener.served, LIMIT - 1, 'the closed connection is no longer counted');

  await served(t, path);
  t.equal(wire.length, LIMIT + 1, 'the new connection reached the wire');
  t.equal(listener.served, LIMIT);
  t.strictSame(refusals, ['connection_limit'], 'nothing else was refused');
});

t.test('a refused peer that never reads nor closes is dropped after a bound', async (t) => {
  const { listener, path, clock, refused } = await listen(t);
  for (let index = 0; index < LIMIT; index++) await served(t, path);
  const refusal = once(refused, 'refused');
  const silent = connect(path);
  t.teardown(() => silent.destroy());
  // The peer reads nothing: the refusal sits unread and its side stays open.
  silent.pause();
  t.strictSame(await refusal, ['connection_limit']);

  clock.advance(4_999);
  t.equal(await openSockets(listener), LIMIT + 1, 'the refused socket lingers while its peer may still read');
  clock.advance(1);
  t.equal(await openSockets(listener), LIMIT, 'destroyed once the bound passed');
  t.equal(listener.served, LIMIT, 'the served ones are untouched');
});

t.test('with debug HTTP on, HTTP connections count toward the same limit', async (t) => {
  const { listener, path, wire, http } = await listen(t, { http: true });
  const browser = connect(path);
  t.teardown(() => browser.destroy());
  browser.setEncoding('utf8');
  browser.write('GET /debug/health\n');
  t.strictSame(await once(browser, 'data'), ['http GET /debug/health\n'], 'served as HTTP');
  await served(t, path);
  t.equal(listener.served, LIMIT);

  const refused = connectAndReadToEnd(t, path);
  t.match((await refused.seen).received, /"code":"limit_exceeded"/, 'one more is refused');

  const gone = once(http[0]!, 'close');
  browser.end();
  http[0]!.end();
  await gone;
  await served(t, path);
  t.equal(wire.length, 2, 'a wire connection took the place the HTTP one left');
  t.equal(listener.served, LIMIT);
});

t.test('a stopping listener closes new connections unanswered', async (t) => {
  const { listener, path, wire, refusals } = await listen(t);
  listener.refuseNew();
  const { seen } = connectAndReadToEnd(t, path);
  t.equal((await seen).received, '', 'not one byte');
  t.equal(wire.length, 0);
  t.strictSame(refusals, ['stopping']);
});
