import Fastify from 'fastify';
import t from 'tap';
import type { Connection } from '../../core/connections/connection.js';
import { isWireError } from '../../core/errors.js';
import { ExecutorRegistry } from '../../core/executors/executor-registry.js';
import executor from '../../plugins/executor.js';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { fakeClock } from '../helpers/fake-clock.js';

const FIFTEEN_MINUTES = 900_000;

/** A connection driven in process, with a count of the close listeners added to it. */
function openConnection(daemon: Awaited<ReturnType<typeof startDaemon>>) {
  const channel = daemon.app.framing.open({
    write: () => true,
    writableLength: 0,
    destroyed: false,
    destroy: () => {},
  });
  const connection: Connection = channel.connection;
  let listeners = 0;
  const onClose = connection.onClose.bind(connection);
  connection.onClose = (listener) => {
    listeners++;
    onClose(listener);
  };
  return { channel, connection, listeners: () => listeners };
}

t.test('decorates one registry that runs on the daemon clock', async (t) => {
  const daemon = await startDaemon(t);
  t.ok(daemon.app.executors instanceof ExecutorRegistry);
  const { connection } = openConnection(daemon);
  daemon.app.executors.create(daemon.app.executorConnection(connection));
  t.equal(daemon.app.executors.size, 1);
  daemon.clock.advance(59_999);
  t.equal(daemon.app.executors.size, 1);
  daemon.clock.advance(1);
  t.equal(daemon.app.executors.size, 0, 'the confirmation deadline follows the injected clock');
});

t.test('a connection that reached the registry detaches it when it closes, tied once', async (t) => {
  const daemon = await startDaemon(t);
  const { executors } = daemon.app;
  const { channel, connection, listeners } = openConnection(daemon);
  t.equal(daemon.app.executorConnection(connection), connection.id);
  const created = executors.create(daemon.app.executorConnection(connection));
  executors.confirm(daemon.app.executorConnection(connection), created);
  t.equal(listeners(), 1, 'one close listener however often the connection is used');
  t.same(executors.attachmentOf(created.executor_id), {
    connection_id: connection.id,
    executor_generation: 1,
  });

  channel.close();
  t.equal(executors.attachmentOf(created.executor_id), null);
  t.equal(executors.view()[0]?.state, 'detached');
  daemon.clock.advance(FIFTEEN_MINUTES);
  t.equal(executors.size, 0, 'the idle timer started at the close');
});

t.test('a connection that never reached the registry is not watched', async (t) => {
  const daemon = await startDaemon(t);
  const { channel, listeners } = openConnection(daemon);
  channel.close();
  t.equal(listeners(), 0);
});

t.test('a closed connection is refused and changes nothing', async (t) => {
  const daemon = await startDaemon(t);
  const { executors } = daemon.app;
  const holder = openConnection(daemon);
  const created = executors.create(daemon.app.executorConnection(holder.connection));
  executors.confirm(holder.connection.id, created);

  const gone = openConnection(daemon);
  gone.channel.close();
  let code: string | undefined;
  try {
    executors.resume(daemon.app.executorConnection(gone.connection), created);
  } catch (error) {
    code = isWireError(error) ? error.code : 'not a wire error';
  }
  t.equal(code, 'stale_connection');
  t.same(executors.attachmentOf(created.executor_id), {
    connection_id: holder.connection.id,
    executor_generation: 1,
  });
});

for (const transport of TRANSPORTS) {
  t.test(`a wire disconnect detaches the executor (${transport})`, async (t) => {
    const daemon = await startDaemon(t);
    const client = await daemon.connect(transport);
    const created = await client.call('executor.create', {}, { operation: op() });
    const executorId = created.executor_id as string;
    await client.call(
      'executor.confirm',
      { executor_id: executorId, resume_secret: created.resume_secret },
      { operation: op() },
    );
    t.equal(daemon.app.executors.view()[0]?.state, 'attached');
    client.close();
    const deadline = Date.now() + 5_000;
    while (daemon.app.executors.attachmentOf(executorId) !== null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    t.equal(daemon.app.executors.view()[0]?.state, 'detached');
  });
}

t.test('closing the daemon discards every executor', async (t) => {
  const daemon = await startDaemon(t);
  const { executors } = daemon.app;
  const attached = openConnection(daemon);
  executors.create(daemon.app.executorConnection(attached.connection));
  const detached = openConnection(daemon);
  const created = executors.create(daemon.app.executorConnection(detached.connection));
  executors.confirm(detached.connection.id, created);
  executors.rotate(detached.connection.id, created);
  detached.channel.close();
  t.equal(executors.size, 2);
  await daemon.app.close();
  t.equal(executors.size, 0);
  t.same(executors.view(), []);
  daemon.clock.advance(FIFTEEN_MINUTES * 2);
  t.equal(executors.size, 0, 'no timer outlives the daemon');
});

t.test('needs the framing and operations plugins', async (t) => {
  const app = Fastify();
  t.teardown(() => app.close());
  app.register(executor, { clock: fakeClock() });
  await t.rejects(async () => {
    await app.ready();
  }, /framing/);
});
