import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  BASE64URL_SECRET,
  confirmedExecutor,
  createdExecutor,
  disconnect,
  identity,
  outcome,
  proof,
  SIXTY_SECONDS,
} from './executor.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`executor.rotate (${transport})`, async (t) => {
    t.test('issues a candidate pending for 60 s while the old proof stays valid', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const rotated = await client.call('executor.rotate', identity(held, 1), { operation: op() });
      t.same(Object.keys(rotated).sort(), [
        'executor_generation',
        'executor_id',
        'pending_timeout_ms',
        'resume_secret',
        'status',
      ]);
      t.match(rotated, {
        executor_id: held.executor_id,
        executor_generation: 1,
        status: 'rotation_pending',
        pending_timeout_ms: 60_000,
      });
      t.match(rotated.resume_secret, BASE64URL_SECRET);
      t.not(rotated.resume_secret, held.resume_secret);
      t.equal(daemon.app.executors.view()[0]?.rotation_pending, true);

      const other = await daemon.connect(transport);
      const resumed = await other.call('executor.resume', proof(held), { operation: op() });
      t.equal(resumed.executor_generation, 2, 'the old proof still resumes');
    });

    t.test('a new rotation replaces the candidate', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const first = await client.call('executor.rotate', identity(held, 1), { operation: op() });
      const second = await client.call('executor.rotate', identity(held, 1), { operation: op() });
      t.not(second.resume_secret, first.resume_secret);
      const replaced = { ...identity(held, 1), resume_secret: first.resume_secret };
      t.equal(await outcome(client, 'executor.rotate_confirm', replaced), 'unauthorized');
      const other = await daemon.connect(transport);
      t.equal(
        await outcome(other, 'executor.resume', proof(held, first.resume_secret as string)),
        'unauthorized',
        'the replaced candidate no longer resumes',
      );
      const current = { ...identity(held, 1), resume_secret: second.resume_secret };
      t.equal(await outcome(client, 'executor.rotate_confirm', current), 'ok');
    });

    t.test('a disconnect does not extend the rotation deadline', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const early = await confirmedExecutor(first);
      const late = await confirmedExecutor(second);
      const earlyRotation = await first.call('executor.rotate', identity(early, 1), { operation: op() });
      const lateRotation = await second.call('executor.rotate', identity(late, 1), { operation: op() });
      await disconnect(daemon, first, early.executor_id);
      await disconnect(daemon, second, late.executor_id);

      daemon.clock.advance(SIXTY_SECONDS - 1);
      const resumer = await daemon.connect(transport);
      const resumed = await resumer.call(
        'executor.resume',
        proof(early, earlyRotation.resume_secret as string),
        {
          operation: op(),
        },
      );
      t.equal(resumed.executor_generation, 2, 'the candidate resumes at 59,999 ms');

      daemon.clock.advance(1);
      const tooLate = await daemon.connect(transport);
      t.equal(
        await outcome(tooLate, 'executor.resume', proof(late, lateRotation.resume_secret as string)),
        'unauthorized',
        'the candidate is gone at 60,000 ms though its connection left',
      );
      t.equal(await outcome(tooLate, 'executor.resume', proof(late)), 'ok', 'the old proof remains');
    });

    t.test('needs the confirmed attachment at the current generation', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const provisional = await createdExecutor(client);
      t.equal(await outcome(client, 'executor.rotate', identity(provisional, 1)), 'stale_connection');
      await client.call('executor.confirm', proof(provisional), { operation: op() });
      t.equal(await outcome(other, 'executor.rotate', identity(provisional, 1)), 'unauthorized', 'no proof');
      t.equal(await outcome(client, 'executor.rotate', identity(provisional, 2)), 'stale_connection');
      t.equal(
        await outcome(client, 'executor.rotate', { executor_id: 'exe_missing', executor_generation: 1 }),
        'unauthorized',
      );
      t.equal(await outcome(client, 'executor.rotate', identity(provisional, 1)), 'ok');
    });

    t.test('the payload is strict', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const payloads: Array<Record<string, unknown>> = [
        {},
        { executor_id: held.executor_id },
        { executor_id: held.executor_id, executor_generation: 0 },
        { executor_id: held.executor_id, executor_generation: 1.5 },
        { executor_id: held.executor_id, executor_generation: '1' },
        { ...identity(held, 1), resume_secret: held.resume_secret },
      ];
      for (const [index, payload] of payloads.entries()) {
        t.equal(await outcome(client, 'executor.rotate', payload), 'invalid_payload', `payload ${index}`);
      }
      t.equal(daemon.app.executors.view()[0]?.rotation_pending, false, 'no refusal rotated');
    });
  });
}
