import { once } from 'node:events';
import t from 'tap';
import { until } from '../routes/session.resources.fixture.js';
import { lookupSession } from './lookup-session.js';

t.test("executor.close releases the executor and leaves the client's connection open", async (t) => {
  const { daemon, client, session } = await lookupSession(t);
  const executor = await client.startExecutor({});
  t.not(daemon.app.executors.attachmentOf(executor.id), null);
  await executor.close();
  t.equal(daemon.app.executors.attachmentOf(executor.id), null, 'the executor is released');
  t.equal(client.wire.closed, false);
  t.equal((await session.resources()).entries.length, 1, 'the client goes on working');
  const again = await client.startExecutor({});
  t.not(again.id, executor.id, 'and can start another executor on its connection');
  await again.close();
});

t.test(
  'a dropped connection: the client and the executor say so, the executor resumes on a connection it closes with itself',
  async (t) => {
    const { net, client } = await lookupSession(t);
    const executor = await client.startExecutor({}, { retryDelayMs: 1 });
    const clientLost = once(client, 'connection_lost');
    const executorLost = once(executor, 'connection_lost');
    const resumed = once(executor, 'resumed');
    net.current.cut();
    await clientLost;
    await executorLost;
    t.same(await resumed, [2], 'resumed at generation 2');
    const own = executor.connection;
    t.not(own, client.wire, 'on a connection of its own');
    await executor.close();
    await until(() => own.closed, 'its own connection to close');
  },
);

t.test(
  'a daemon that stops: the client and the executor say so once, and the executor keeps trying',
  async (t) => {
    const { net, client } = await lookupSession(t);
    const executor = await client.startExecutor({}, { retryDelayMs: 1 });
    t.teardown(() => executor.close());
    const stopped: string[] = [];
    client.on('daemon_stopped', () => stopped.push('client'));
    executor.on('daemon_stopped', () => stopped.push('executor'));
    net.refusals = 50;
    net.current.cut();
    await until(() => stopped.length === 2 && net.refusals === 0, 'both to notice and the attempts to go on');
    t.same(stopped.sort(), ['client', 'executor'], 'each said it once');
    await until(() => executor.generation === 2, 'the executor to resume once the daemon answers again');
  },
);

t.test('a client closed on purpose reports no loss', async (t) => {
  const { client } = await lookupSession(t);
  let lost = 0;
  client.on('connection_lost', () => lost++);
  client.close();
  await until(() => client.wire.closed, 'the connection to close');
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(lost, 0);
});
