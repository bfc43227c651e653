import t from 'tap';
import { PROFILE_LIMITS } from '../../core/limits.js';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { BASE64URL_SECRET, createdExecutor, disconnect, proof, SIXTY_SECONDS } from './executor.fixture.js';

for (const transport of TRANSPORTS) {
  t.test(`executor.create (${transport})`, async (t) => {
    t.test('returns an identity at generation 1 and a fresh 32-byte base64url secret', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const response = await client.request('executor.create', {}, { operation: op() });
      t.equal(response.ok, true);
      t.equal(response.instance_id, daemon.app.instanceId, 'the instance identity is in the envelope');
      const created = response.result!;
      t.same(Object.keys(created).sort(), ['executor_generation', 'executor_id', 'resume_secret']);
      t.equal(created.executor_generation, 1);
      t.match(created.executor_id, /^[A-Za-z0-9._:-]{1,128}$/);
      t.match(created.resume_secret, BASE64URL_SECRET);
      t.equal(Buffer.from(created.resume_secret as string, 'base64url').length, 32);

      const other = await createdExecutor(await daemon.connect(transport));
      t.not(other.executor_id, created.executor_id);
      t.not(other.resume_secret, created.resume_secret);
    });

    t.test('one executor per connection, provisional ones included', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const created = await createdExecutor(client);
      const again = await client.request('executor.create', {}, { operation: op() });
      t.equal(again.error?.code, 'conflict');
      t.equal(daemon.app.executors.size, 1, 'the refused create made nothing');
      await client.call('executor.confirm', proof(created), { operation: op() });
      const afterConfirm = await client.request('executor.create', {}, { operation: op() });
      t.equal(afterConfirm.error?.code, 'conflict', 'a confirmed executor holds the connection too');
    });

    t.test('at most 256 executors per daemon; expiry frees capacity', async (t) => {
      const daemon = await startDaemon(t);
      t.equal(PROFILE_LIMITS.executors, 256);
      for (let index = 0; index < PROFILE_LIMITS.executors; index++) {
        const client = await daemon.connect(transport);
        await createdExecutor(client);
        await disconnect(daemon, client);
      }
      t.equal(daemon.app.executors.size, 256, 'disconnected provisional executors still count');
      const client = await daemon.connect(transport);
      const refused = await client.request('executor.create', {}, { operation: op() });
      t.equal(refused.error?.code, 'limit_exceeded', 'the 257th is refused');
      t.equal(daemon.app.executors.size, 256);

      daemon.clock.advance(SIXTY_SECONDS);
      t.equal(daemon.app.executors.size, 0, 'unconfirmed executors expired');
      t.match(await createdExecutor(client), { executor_generation: 1 });
    });

    t.test('the payload is strict and the envelope needs only a fresh operation id', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const extra = await client.request('executor.create', { name: 'x' }, { operation: op() });
      t.equal(extra.error?.code, 'invalid_payload');
      const noOperation = await client.request('executor.create', {});
      t.equal(noOperation.error?.code, 'invalid_request');
      const withSession = await client.request('executor.create', {}, { session: 's', operation: op() });
      t.equal(withSession.error?.code, 'invalid_request');
      const withControl = await client.request('executor.create', {}, { control: 'c', operation: op() });
      t.equal(withControl.error?.code, 'invalid_request');
      t.equal(daemon.app.executors.size, 0, 'nothing refused created an executor');
      t.match(await createdExecutor(client), { executor_generation: 1 });
    });
  });
}
