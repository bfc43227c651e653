import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  confirmedExecutor,
  createdExecutor,
  disconnect,
  FIFTEEN_MINUTES,
  forgedSecret,
  identity,
  outcome,
  proof,
} from './executor.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`executor.resume (${transport})`, async (t) => {
    t.test('increments the generation, fences the old connection, returns pending_calls', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      const resumed = await second.call('executor.resume', proof(held), { operation: op() });
      t.same(resumed, { executor_id: held.executor_id, executor_generation: 2, pending_calls: [] });

      for (const generation of [1, 2]) {
        for (const method of ['executor.rotate', 'executor.release']) {
          t.equal(
            await outcome(first, method, identity(held, generation)),
            'unauthorized',
            `${method}: the fenced connection holds no proof`,
          );
        }
      }
      t.equal(
        await outcome(first, 'executor.rotate_confirm', {
          ...identity(held, 2),
          resume_secret: held.resume_secret,
        }),
        'stale_connection',
        'with the current secret the fenced connection proves authority, from a stale connection',
      );
      t.equal(
        await outcome(second, 'executor.rotate', identity(held, 1)),
        'stale_connection',
        'old generation',
      );
      t.equal(await outcome(second, 'executor.rotate', identity(held, 2)), 'ok');
      t.match(await createdExecutor(first), { executor_generation: 1 }, 'the fenced connection is free');

      const third = await daemon.connect(transport);
      const again = await third.call('executor.resume', proof(held), { operation: op() });
      t.equal(again.executor_generation, 3);
      t.equal(await outcome(second, 'executor.release', identity(held, 3)), 'unauthorized', 'fenced');
      t.equal(await outcome(third, 'executor.release', identity(held, 3)), 'ok');
    });

    t.test('resume on the attached connection itself moves to the next generation', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      const resumed = await client.call('executor.resume', proof(held), { operation: op() });
      t.equal(resumed.executor_generation, 2);
      t.equal(await outcome(client, 'executor.rotate', identity(held, 1)), 'stale_connection');
      t.equal(await outcome(client, 'executor.rotate', identity(held, 2)), 'ok');
    });

    t.test('a connection holding another executor cannot resume', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      await confirmedExecutor(second);
      t.equal(await outcome(second, 'executor.resume', proof(held)), 'conflict');
      t.equal(await outcome(first, 'executor.rotate', identity(held, 1)), 'ok', 'nothing was fenced');
    });

    t.test('a wrong secret or unknown executor is unauthorized and fences nothing', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      const wrong = await second.request('executor.resume', proof(held, forgedSecret()), { operation: op() });
      const unknown = await second.request(
        'executor.resume',
        { executor_id: 'exe_missing', resume_secret: held.resume_secret },
        { operation: op() },
      );
      t.equal(wrong.error?.code, 'unauthorized');
      t.same(wrong.error, unknown.error, 'neither reveals which it was');
      t.equal(await outcome(first, 'executor.rotate', identity(held, 1)), 'ok');
    });

    t.test('detached confirmed executors expire 15 minutes after the disconnect', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const second = await daemon.connect(transport);
      const early = await confirmedExecutor(first);
      const late = await confirmedExecutor(second);
      await disconnect(daemon, first, early.executor_id);
      await disconnect(daemon, second, late.executor_id);
      t.same(
        daemon.app.executors.view().map((view) => view.state),
        ['detached', 'detached'],
      );

      daemon.clock.advance(FIFTEEN_MINUTES - 1);
      const resumer = await daemon.connect(transport);
      const resumed = await resumer.call('executor.resume', proof(early), { operation: op() });
      t.equal(resumed.executor_generation, 2, 'in time at 899,999 ms');

      daemon.clock.advance(1);
      t.equal(daemon.app.executors.size, 1, 'the other one expired at 900,000 ms');
      const tooLate = await daemon.connect(transport);
      t.equal(await outcome(tooLate, 'executor.resume', proof(late)), 'unauthorized');
    });

    t.test('an attached executor never idles out', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await confirmedExecutor(client);
      daemon.clock.advance(FIFTEEN_MINUTES * 4);
      t.equal(await outcome(client, 'executor.rotate', identity(held, 1)), 'ok');
    });

    t.test('each detachment starts a new 15-minute timer', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const held = await confirmedExecutor(first);
      await disconnect(daemon, first, held.executor_id);
      daemon.clock.advance(FIFTEEN_MINUTES - 10);
      const second = await daemon.connect(transport);
      await second.call('executor.resume', proof(held), { operation: op() });
      await disconnect(daemon, second, held.executor_id);
      daemon.clock.advance(FIFTEEN_MINUTES - 1);
      const third = await daemon.connect(transport);
      t.equal(await outcome(third, 'executor.resume', proof(held)), 'ok', 'a new detachment, a new timer');
    });

    t.test('the payload is strict', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const held = await createdExecutor(client);
      const payloads: Array<Record<string, unknown>> = [
        {},
        { executor_id: held.executor_id },
        { ...proof(held), executor_generation: 1 },
        { executor_id: held.executor_id, resume_secret: null },
        { executor_id: held.executor_id, resume_secret: 'y'.repeat(129) },
      ];
      for (const [index, payload] of payloads.entries()) {
        t.equal(await outcome(client, 'executor.resume', payload), 'invalid_payload', `payload ${index}`);
      }
    });
  });
}
