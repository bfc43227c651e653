import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  candidateSecret,
  confirmedExecutor,
  disconnect,
  identity,
  outcome,
  proof,
  SIXTY_SECONDS,
} from './executor.fixture.js';

/**
 * The recovery paths of "Rotate without losing reconnect authority". A lost reply is a request the
 * daemon ran whose response the application never read: the test reads nothing from it but its
 * operation id, then recovers only with what the application retained.
 */
for (const transport of TRANSPORTS) {
  t.test(`executor recovery (${transport})`, async (t) => {
    t.test('lost rotate reply: the retry is operation_already_known, lookup has no secret', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const operation = op();
      const lost = await client.request('executor.rotate', identity(held, 1), { operation });
      const retry = await client.request('executor.rotate', identity(held, 1), { operation });
      t.equal(retry.error?.code, 'operation_already_known');
      const found = await client.call('operation.lookup', { operation_id: operation });
      t.same(found.result, {
        status: 'rotation_pending',
        executor_id: held.executor_id,
        executor_generation: 1,
        pending_timeout_ms: 60_000,
      });
      t.notMatch(JSON.stringify(found), lost.result?.resume_secret as string);
    });

    t.test('lost rotate reply: retain the old proof and rotate again', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const lost = await candidateSecret(client, held);
      const again = await client.call('executor.rotate', identity(held, 1), { operation: op() });
      const candidate = again.resume_secret as string;
      t.equal(
        await outcome(client, 'executor.rotate_confirm', { ...identity(held, 1), resume_secret: candidate }),
        'ok',
      );
      const other = await daemon.connect(transport);
      t.equal(
        await outcome(other, 'executor.resume', proof(held, lost)),
        'unauthorized',
        'lost candidate void',
      );
      t.equal(await outcome(other, 'executor.resume', proof(held)), 'unauthorized', 'old proof retired');
      t.equal(await outcome(other, 'executor.resume', proof(held, candidate)), 'ok');
    });

    t.test('lost rotate reply with the connection: resume with the old proof', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      const lost = await candidateSecret(first, held);
      await disconnect(daemon, first, held.executor_id);

      const second = await daemon.connect(transport);
      const resumed = await second.call('executor.resume', proof(held), { operation: op() });
      t.equal(resumed.executor_generation, 2);
      t.equal(
        daemon.app.executors.view()[0]?.rotation_pending,
        false,
        'the old proof cancelled the candidate',
      );
      const third = await daemon.connect(transport);
      t.equal(await outcome(third, 'executor.resume', proof(held, lost)), 'unauthorized');
      t.equal(await outcome(second, 'executor.rotate', identity(held, 2)), 'ok', 'rotation can start over');
    });

    t.test('lost confirmation reply that was applied: the new proof resumes, even later', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      const candidate = await candidateSecret(first, held);
      const operation = op();
      await first.request(
        'executor.rotate_confirm',
        { ...identity(held, 1), resume_secret: candidate },
        { operation },
      );
      await disconnect(daemon, first, held.executor_id);
      daemon.clock.advance(SIXTY_SECONDS);

      const second = await daemon.connect(transport, []);
      const found = await second.call('operation.lookup', { operation_id: operation });
      t.same(found.result, { status: 'completed', executor_id: held.executor_id, executor_generation: 1 });

      const resumer = await daemon.connect(transport);
      const resumed = await resumer.call('executor.resume', proof(held, candidate), { operation: op() });
      t.equal(resumed.executor_generation, 2, 'the promoted proof has no pending deadline');
      t.equal(
        await outcome(resumer, 'executor.resume', proof(held)),
        'unauthorized',
        'the old one is retired',
      );
    });

    t.test('lost confirmation that never arrived: the new proof resumes and promotes', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      const candidate = await candidateSecret(first, held);
      await disconnect(daemon, first, held.executor_id);
      daemon.clock.advance(SIXTY_SECONDS - 1);

      const second = await daemon.connect(transport);
      const resumed = await second.call('executor.resume', proof(held, candidate), { operation: op() });
      t.equal(resumed.executor_generation, 2);
      t.equal(daemon.app.executors.view()[0]?.rotation_pending, false);
      daemon.clock.advance(SIXTY_SECONDS);
      const third = await daemon.connect(transport);
      t.equal(
        await outcome(third, 'executor.resume', proof(held)),
        'unauthorized',
        'the old proof is retired',
      );
      t.equal(await outcome(third, 'executor.resume', proof(held, candidate)), 'ok', 'the candidate stays');
      t.equal(await outcome(second, 'executor.release', identity(held, 2)), 'unauthorized', 'fenced');
    });

    t.test('lost confirmation that never arrived, candidate expired: old-proof recovery', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      const candidate = await candidateSecret(first, held);
      await disconnect(daemon, first, held.executor_id);
      daemon.clock.advance(SIXTY_SECONDS);

      const second = await daemon.connect(transport);
      t.equal(await outcome(second, 'executor.resume', proof(held, candidate)), 'unauthorized');
      const resumed = await second.call('executor.resume', proof(held), { operation: op() });
      t.equal(resumed.executor_generation, 2, 'the old proof recovers');
    });

    t.test('a lost create reply cannot recover the secret', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const operation = op();
      const lost = await client.request('executor.create', {}, { operation });
      const found = await client.call('operation.lookup', { operation_id: operation });
      t.same(found.result, {
        status: 'completed',
        executor_id: lost.result?.executor_id,
        executor_generation: 1,
      });
      t.notMatch(JSON.stringify(found), lost.result?.resume_secret as string);
      await disconnect(daemon, client);
      daemon.clock.advance(SIXTY_SECONDS);
      t.equal(daemon.app.executors.size, 0, 'the unconfirmed executor is gone by itself');
    });
  });
}
