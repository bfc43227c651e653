import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import {
  createdExecutor,
  disconnect,
  forgedSecret,
  identity,
  outcome,
  proof,
  SIXTY_SECONDS,
} from './executor.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`executor.confirm (${transport})`, async (t) => {
    t.test('confirms on the issuing connection, keeping generation 1', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      const confirmed = await client.call('executor.confirm', proof(created), { operation: op() });
      t.same(confirmed, { executor_id: created.executor_id, executor_generation: 1, pending_calls: [] });
      t.same(daemon.app.executors.view()[0]?.state, 'attached');
    });

    t.test('within 60 seconds: 59,999 ms is in time', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      daemon.clock.advance(SIXTY_SECONDS - 1);
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'ok');
      daemon.clock.advance(SIXTY_SECONDS);
      t.equal(await outcome(client, 'executor.rotate', identity(created, 1)), 'ok', 'confirmed stays');
    });

    t.test('at 60,000 ms the provisional executor is gone', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      daemon.clock.advance(SIXTY_SECONDS);
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'unauthorized');
      t.equal(await outcome(client, 'executor.resume', proof(created)), 'unauthorized');
      t.equal(daemon.app.executors.size, 0);
      t.match(await createdExecutor(client), { executor_generation: 1 }, 'the connection is free again');
    });

    t.test('only the issuing connection may confirm', async (t) => {
      const daemon = await startDaemon(t);
      const issuer = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const created = await createdExecutor(issuer);
      t.equal(await outcome(other, 'executor.confirm', proof(created)), 'stale_connection');
      t.equal(await outcome(issuer, 'executor.confirm', proof(created)), 'ok', 'the issuer still can');
    });

    t.test('a disconnect does not extend the confirmation deadline; resume still confirms', async (t) => {
      const daemon = await startDaemon(t);
      const issuer = await daemon.connect(transport);
      const created = await createdExecutor(issuer);
      daemon.clock.advance(30_000);
      await disconnect(daemon, issuer);
      const next = await daemon.connect(transport);
      t.equal(await outcome(next, 'executor.confirm', proof(created)), 'stale_connection');
      daemon.clock.advance(SIXTY_SECONDS - 30_000 - 1);
      const resumed = await next.call('executor.resume', proof(created), { operation: op() });
      t.equal(resumed.executor_generation, 2, 'resume confirms a live provisional executor');

      const late = await daemon.connect(transport);
      const expiring = await createdExecutor(late);
      await disconnect(daemon, late);
      daemon.clock.advance(SIXTY_SECONDS);
      const another = await daemon.connect(transport);
      t.equal(await outcome(another, 'executor.resume', proof(expiring)), 'unauthorized');
    });

    t.test('a repeated confirmation is stale_connection', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'ok');
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'stale_connection');
    });

    t.test('a wrong secret and an unknown executor are refused alike', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      const wrong = await client.request('executor.confirm', proof(created, forgedSecret()), {
        operation: op(),
      });
      const unknown = await client.request(
        'executor.confirm',
        { executor_id: 'exe_unknown', resume_secret: created.resume_secret },
        { operation: op() },
      );
      t.same(wrong.error, unknown.error);
      t.equal(wrong.error?.code, 'unauthorized');
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'ok', 'refusals changed nothing');
    });

    t.test('the payload is strict', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      const payloads: Array<Record<string, unknown>> = [
        {},
        { executor_id: created.executor_id },
        { resume_secret: created.resume_secret },
        { ...proof(created), executor_generation: 1 },
        { executor_id: 'bad id', resume_secret: created.resume_secret },
        { executor_id: created.executor_id, resume_secret: '' },
        { executor_id: created.executor_id, resume_secret: 'x'.repeat(129) },
        { executor_id: created.executor_id, resume_secret: 7 },
      ];
      for (const [index, payload] of payloads.entries()) {
        t.equal(await outcome(client, 'executor.confirm', payload), 'invalid_payload', `payload ${index}`);
      }
      const longest = { executor_id: created.executor_id, resume_secret: 'x'.repeat(128) };
      t.equal(await outcome(client, 'executor.confirm', longest), 'unauthorized', 'bounded, then compared');
      t.equal(await outcome(client, 'executor.confirm', proof(created)), 'ok');
    });
  });
}
