import t from 'tap';
import { EXECUTOR_METHODS } from '../../core/executors/executor-types.js';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { confirmedExecutor, identity, proof } from './executor.fixture.js';

/** A payload per method that passes its schema, whatever the outcome. */
function payloadFor(method: string, held: { executor_id: string; resume_secret: string }) {
  switch (method) {
    case 'executor.create':
      return {};
    case 'executor.confirm':
    case 'executor.resume':
      return proof(held);
    case 'executor.rotate_confirm':
      return { ...identity(held, 1), resume_secret: held.resume_secret };
    default:
      return identity(held, 1);
  }
}

for (const transport of TRANSPORTS) {
  t.test(`executor envelopes (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('profile methods are unknown_method on an ordinary v2 connection', async (t) => {
      const owner = await daemon.connect(transport);
      const held = await confirmedExecutor(owner);
      const ordinary = await daemon.connect(transport, []);
      for (const method of EXECUTOR_METHODS) {
        const refused = await ordinary.request(method, payloadFor(method, held), { operation: op() });
        t.equal(refused.error?.code, 'unknown_method', method);
      }
      const listed = await ordinary.call('capabilities');
      t.notMatch(JSON.stringify(listed), 'executor.', 'an ordinary connection is not told of them');
    });

    t.test('a profile connection lists all six among its operations', async (t) => {
      const client = await daemon.connect(transport);
      const listed = await client.call('capabilities');
      const callbacks = (listed.capabilities as Record<string, Record<string, unknown>>)
        .application_callbacks;
      const operations = callbacks?.operations as string[];
      for (const method of EXECUTOR_METHODS) t.ok(operations.includes(method), method);
      t.notOk(
        ((listed.capabilities as Record<string, unknown>).operations as string[]).includes('executor.create'),
        'not among the ordinary operations',
      );
    });

    t.test('session or control set, or no operation id, is invalid_request', async (t) => {
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const { session, control } = await claimedSession(client, daemon.workspace);
      for (const method of EXECUTOR_METHODS) {
        const payload = payloadFor(method, held);
        const withSession = await client.request(method, payload, { session, operation: op() });
        t.equal(withSession.error?.code, 'invalid_request', `${method} with a session`);
        const withControl = await client.request(method, payload, { control, operation: op() });
        t.equal(withControl.error?.code, 'invalid_request', `${method} with a control token`);
        const withBoth = await client.request(method, payload, { session, control, operation: op() });
        t.equal(withBoth.error?.code, 'invalid_request', `${method} with session and control`);
        const withoutOperation = await client.request(method, payload);
        t.equal(withoutOperation.error?.code, 'invalid_request', `${method} without an operation id`);
      }
      t.same(
        daemon.app.executors.view().find((view) => view.executor_id === held.executor_id),
        {
          executor_id: held.executor_id,
          executor_generation: 1,
          state: 'attached',
          connection_id: daemon.app.executors.attachmentOf(held.executor_id)?.connection_id,
          pins: 0,
          rotation_pending: false,
        },
        'no refused envelope reached the registry',
      );
    });

    t.test('a retained operation id is operation_already_known, whatever the method', async (t) => {
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const { session } = await claimedSession(client, daemon.workspace);
      const used = op();
      await client.call('session.claim', {}, { session, operation: used });
      for (const method of EXECUTOR_METHODS) {
        const reused = await client.request(method, payloadFor(method, held), { operation: used });
        t.equal(reused.error?.code, 'operation_already_known', method);
      }
      const own = op();
      const other = await daemon.connect(transport);
      await other.call('executor.create', {}, { operation: own });
      const again = await other.request('executor.create', {}, { operation: own });
      t.equal(again.error?.code, 'operation_already_known');
      const elsewhere = await client.request('executor.rotate', identity(held, 1), { operation: own });
      t.equal(elsewhere.error?.code, 'operation_already_known', 'operation ids are daemon-wide');
      t.equal(
        daemon.app.executors.view().find((view) => view.executor_id === held.executor_id)?.rotation_pending,
        false,
      );
    });
  });
}
