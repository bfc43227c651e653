import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { confirmedExecutor, createdExecutor, identity, outcome, proof } from './executor.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`executor.release (${transport})`, async (t) => {
    t.test('releases the executor and invalidates both proofs', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const rotated = await client.call('executor.rotate', identity(held, 1), { operation: op() });
      const released = await client.call('executor.release', identity(held, 1), { operation: op() });
      t.same(released, { executor_id: held.executor_id, executor_generation: 1, status: 'released' });
      t.equal(daemon.app.executors.size, 0);

      const other = await daemon.connect(transport);
      t.equal(await outcome(other, 'executor.resume', proof(held)), 'unauthorized', 'the proof is void');
      t.equal(
        await outcome(other, 'executor.resume', proof(held, rotated.resume_secret as string)),
        'unauthorized',
        'the candidate is void',
      );
      t.equal(await outcome(client, 'executor.release', identity(held, 1)), 'unauthorized', 'released once');
      t.match(await createdExecutor(client), { executor_generation: 1 }, 'the connection is free');
    });

    t.test('a provisional executor can be released by its issuer', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      t.equal(await outcome(client, 'executor.release', identity(created, 1)), 'ok');
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'unauthorized');
    });

    t.test('needs the holding connection at the current generation', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      t.equal(await outcome(other, 'executor.release', identity(held, 1)), 'unauthorized', 'no proof');
      t.equal(await outcome(client, 'executor.release', identity(held, 2)), 'stale_connection');
      t.equal(daemon.app.executors.size, 1, 'refusals released nothing');
      t.equal(await outcome(client, 'executor.release', identity(held, 1)), 'ok');
    });

    t.test('the payload is strict', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const payloads: Array<Record<string, unknown>> = [
        {},
        { executor_id: held.executor_id },
        { ...identity(held, 1), reason: 'done' },
        { executor_id: held.executor_id, executor_generation: null },
        proof(held),
      ];
      for (const [index, payload] of payloads.entries()) {
        t.equal(await outcome(client, 'executor.release', payload), 'invalid_payload', `payload ${index}`);
      }
      t.equal(daemon.app.executors.size, 1);
    });
  });
}
