import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { createdExecutor, forgedSecret, identity, proof } from './executor.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`operation.lookup of executor methods (${transport})`, async (t) => {
    t.test('keeps only status and the returned identity, readable without executor authority', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const reader = await daemon.connect(transport, []);
      const operations = {
        create: op(),
        confirm: op(),
        resume: op(),
        rotate: op(),
        rotateConfirm: op(),
        release: op(),
      };
      const created = await first.call('executor.create', {}, { operation: operations.create });
      const held = created as unknown as { executor_id: string; resume_secret: string };
      await first.call('executor.confirm', proof(held), { operation: operations.confirm });
      await second.call('executor.resume', proof(held), { operation: operations.resume });
      const rotated = await second.call('executor.rotate', identity(held, 2), {
        operation: operations.rotate,
      });
      await second.call(
        'executor.rotate_confirm',
        { ...identity(held, 2), resume_secret: rotated.resume_secret },
        { operation: operations.rotateConfirm },
      );
      await second.call('executor.release', identity(held, 2), { operation: operations.release });

      const expected = {
        create: {
          method: 'executor.create',
          result: { status: 'completed', executor_id: held.executor_id, executor_generation: 1 },
        },
        confirm: {
          method: 'executor.confirm',
          result: { status: 'completed', executor_id: held.executor_id, executor_generation: 1 },
        },
        resume: {
          method: 'executor.resume',
          result: { status: 'completed', executor_id: held.executor_id, executor_generation: 2 },
        },
        rotate: {
          method: 'executor.rotate',
          result: {
            status: 'rotation_pending',
            executor_id: held.executor_id,
            executor_generation: 2,
            pending_timeout_ms: 60_000,
          },
        },
        rotateConfirm: {
          method: 'executor.rotate_confirm',
          result: { status: 'completed', executor_id: held.executor_id, executor_generation: 2 },
        },
        release: {
          method: 'executor.release',
          result: { status: 'released', executor_id: held.executor_id, executor_generation: 2 },
        },
      };
      for (const [name, operation] of Object.entries(operations)) {
        const found = await reader.call('operation.lookup', { operation_id: operation });
        t.same(
          found,
          {
            operation_id: operation,
            status: 'completed',
            error: null,
            ...expected[name as keyof typeof expected],
          },
          name,
        );
        const text = JSON.stringify(found);
        t.notMatch(text, held.resume_secret, `${name}: no first secret`);
        t.notMatch(text, rotated.resume_secret as string, `${name}: no candidate`);
        t.notMatch(text, 'pending_calls', `${name}: no pending calls`);
      }
    });

    t.test('a refusal is retained as failed with its fixed error only', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const reader = await daemon.connect(transport, []);
      const held = await createdExecutor(client);
      const wrongSecret = forgedSecret();
      const refusals = [
        { method: 'executor.confirm', payload: proof(held, wrongSecret), code: 'unauthorized' },
        { method: 'executor.create', payload: {}, code: 'conflict' },
        { method: 'executor.rotate', payload: identity(held, 1), code: 'stale_connection' },
        { method: 'executor.resume', payload: { ...proof(held), extra: 1 }, code: 'invalid_payload' },
      ];
      for (const refusal of refusals) {
        const operation = op();
        const response = await client.request(refusal.method, refusal.payload, { operation });
        t.equal(response.error?.code, refusal.code, refusal.method);
        const found = await reader.call('operation.lookup', { operation_id: operation });
        t.same(found, {
          operation_id: operation,
          method: refusal.method,
          status: 'failed',
          result: null,
          error: response.error,
        });
        t.notMatch(JSON.stringify(found), wrongSecret);
        t.notMatch(JSON.stringify(found), held.resume_secret);
      }
    });

    t.test('lookup reports history, not current authority', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const operation = op();
      const created = await client.call('executor.create', {}, { operation });
      await client.call('executor.release', identity(created as { executor_id: string }, 1), {
        operation: op(),
      });
      const found = await (await daemon.connect(transport)).call('operation.lookup', {
        operation_id: operation,
      });
      t.equal(found.status, 'completed', 'the create is still reported after the release');
      t.equal(daemon.app.executors.size, 0);
    });
  });
}
