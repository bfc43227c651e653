import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';

async function idleDaemon(t: Parameters<typeof startDaemon>[0]) {
  const stops: number[] = [];
  const daemon = await startDaemon(t, { idleTimeoutMs: 1000, onIdle: () => stops.push(daemon.clock.now()) });
  return { daemon, stops };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

t.test('with no connection the daemon stops exactly at the idle timeout', async (t) => {
  const { daemon, stops } = await idleDaemon(t);
  daemon.clock.advance(999);
  t.same(stops, []);
  daemon.clock.advance(1);
  t.same(stops, [1000]);
  daemon.clock.advance(10_000);
  t.equal(stops.length, 1, 'it stops once');
});

t.test('a connection cancels the timer and its end restarts it', async (t) => {
  const { daemon, stops } = await idleDaemon(t);
  daemon.clock.advance(500);
  const client = await daemon.connect('in-process');
  daemon.clock.advance(5_000);
  t.same(stops, [], 'a connected client keeps the daemon');
  client.close();
  await settle();
  daemon.clock.advance(999);
  t.same(stops, [], 'the timer started when the connection ended');
  daemon.clock.advance(1);
  t.equal(stops.length, 1);
});

t.test('held work keeps the daemon until released', async (t) => {
  const { daemon, stops } = await idleDaemon(t);
  const release = daemon.app.idle.hold();
  daemon.clock.advance(5_000);
  t.same(stops, []);
  release();
  release();
  daemon.clock.advance(1000);
  t.equal(stops.length, 1, 'a double release is harmless');
});

t.test('the stop refuses new connections in the same step', async (t) => {
  const { daemon, stops } = await idleDaemon(t);
  await daemon.socketPath();
  daemon.clock.advance(1000);
  t.equal(stops.length, 1);
  const { connectSocket } = await import('../../client/wire-client.js');
  const { client } = await connectSocket(await daemon.socketPath());
  const outcome = await client.initialize().then(
    () => 'served',
    () => 'closed',
  );
  t.equal(outcome, 'closed', 'a connection after the decision is closed before any answer');
  t.same(client.received, []);
});

t.test('idle stop is off by default', async (t) => {
  const daemon = await startDaemon(t);
  daemon.clock.advance(10_000_000);
  t.equal(daemon.app.idle.armed, false);
});
