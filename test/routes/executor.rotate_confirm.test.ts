import t from 'tap';
import type { TestDaemon, Transport } from '../helpers/daemon.js';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  confirmedExecutor,
  forgedSecret,
  type HeldExecutor,
  identity,
  outcome,
  proof,
  SIXTY_SECONDS,
} from './executor.fixture.js';

/** A confirmed executor on a new connection with a rotation pending. */
async function rotating(daemon: TestDaemon, transport: Transport) {
  const client = await daemon.connect(transport);
  const held = await confirmedExecutor(client);
  const rotated = await client.call('executor.rotate', identity(held, 1), { operation: op() });
  const candidate = rotated.resume_secret as string;
  const confirmation = { ...identity(held, 1), resume_secret: candidate };
  return { client, held: held as HeldExecutor, candidate, confirmation };
}

for (const transport of TRANSPORTS) {
  t.test(`executor.rotate_confirm (${transport})`, async (t) => {
    t.test('promotes the candidate without changing the generation', async (t) => {
      const daemon = await startDaemon(t);
      const { client, held, candidate, confirmation } = await rotating(daemon, transport);
      const confirmed = await client.call('executor.rotate_confirm', confirmation, { operation: op() });
      t.same(confirmed, { executor_id: held.executor_id, executor_generation: 1 });
      t.equal(daemon.app.executors.view()[0]?.rotation_pending, false);
      t.equal(await outcome(client, 'executor.rotate', identity(held, 1)), 'ok', 'still generation 1');

      const other = await daemon.connect(transport);
      t.equal(await outcome(other, 'executor.resume', proof(held)), 'unauthorized', 'the old proof is gone');
      t.equal(await outcome(other, 'executor.resume', proof(held, candidate)), 'ok', 'the new proof resumes');
    });

    t.test('a repeated confirmation is stale_connection', async (t) => {
      const daemon = await startDaemon(t);
      const { client, confirmation } = await rotating(daemon, transport);
      t.equal(await outcome(client, 'executor.rotate_confirm', confirmation), 'ok');
      t.equal(await outcome(client, 'executor.rotate_confirm', confirmation), 'stale_connection');
    });

    t.test('expiry wins at the deadline', async (t) => {
      const daemon = await startDaemon(t);
      const inTime = await rotating(daemon, transport);
      const tooLate = await rotating(daemon, transport);
      daemon.clock.advance(SIXTY_SECONDS - 1);
      t.equal(
        await outcome(inTime.client, 'executor.rotate_confirm', inTime.confirmation),
        'ok',
        '59,999 ms',
      );
      daemon.clock.advance(1);
      t.equal(
        await outcome(tooLate.client, 'executor.rotate_confirm', tooLate.confirmation),
        'stale_connection',
        'no rotation is pending at 60,000 ms',
      );
      const other = await daemon.connect(transport);
      t.equal(
        await outcome(other, 'executor.resume', proof(tooLate.held, tooLate.candidate)),
        'unauthorized',
      );
      t.equal(await outcome(other, 'executor.resume', proof(tooLate.held)), 'ok', 'the old proof survives');
    });

    t.test('only the attached connection, at its generation, with the candidate', async (t) => {
      const daemon = await startDaemon(t);
      const { client, held, confirmation } = await rotating(daemon, transport);
      const other = await daemon.connect(transport);
      t.equal(await outcome(other, 'executor.rotate_confirm', confirmation), 'stale_connection');
      t.equal(
        await outcome(client, 'executor.rotate_confirm', { ...confirmation, executor_generation: 2 }),
        'stale_connection',
      );
      t.equal(
        await outcome(client, 'executor.rotate_confirm', {
          ...confirmation,
          resume_secret: held.resume_secret,
        }),
        'unauthorized',
        'the old proof does not confirm a rotation',
      );
      t.equal(
        await outcome(client, 'executor.rotate_confirm', { ...confirmation, resume_secret: forgedSecret() }),
        'unauthorized',
      );
      t.equal(
        await outcome(client, 'executor.rotate_confirm', confirmation),
        'ok',
        'refusals changed nothing',
      );
    });

    t.test('without a rotation there is nothing to confirm', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const attempt = { ...identity(held, 1), resume_secret: held.resume_secret };
      t.equal(await outcome(client, 'executor.rotate_confirm', attempt), 'stale_connection');
    });

    t.test('the payload is strict', async (t) => {
      const daemon = await startDaemon(t);
      const { client, confirmation } = await rotating(daemon, transport);
      const { resume_secret: _secret, ...withoutSecret } = confirmation;
      const payloads: Array<Record<string, unknown>> = [
        {},
        withoutSecret,
        { ...confirmation, extra: true },
        { ...confirmation, executor_generation: -1 },
        { ...confirmation, resume_secret: 'z'.repeat(129) },
      ];
      for (const [index, payload] of payloads.entries()) {
        t.equal(
          await outcome(client, 'executor.rotate_confirm', payload),
          'invalid_payload',
          `payload ${index}`,
        );
      }
      t.equal(await outcome(client, 'executor.rotate_confirm', confirmation), 'ok');
    });
  });
}
