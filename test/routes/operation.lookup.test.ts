import t from 'tap';
import { OPERATION_RETENTION_MS } from '../../core/limits.js';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`operation.lookup (${transport})`, async (t) => {
    t.test('reports a completed mutation, retained 600 s after it settled', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const operation = op();
      const created = await client.call(
        'session.create',
        { workspace: daemon.workspace, title: null },
        { operation },
      );
      const found = await client.call('operation.lookup', { operation_id: operation });
      t.same(found, {
        operation_id: operation,
        method: 'session.create',
        status: 'completed',
        result: created,
        error: null,
      });

      daemon.clock.advance(599_000);
      t.equal(
        (await client.call('operation.lookup', { operation_id: operation })).status,
        'completed',
        'known at 599 s',
      );
      const reused = await client.request(
        'session.create',
        { workspace: daemon.workspace, title: null },
        { operation },
      );
      t.equal(reused.error?.code, 'operation_already_known', 'still reserved at 599 s');

      daemon.clock.advance(2_000);
      const gone = await client.call('operation.lookup', { operation_id: operation });
      t.same(
        gone,
        { operation_id: operation, method: null, status: 'unknown', result: null, error: null },
        'unknown at 601 s',
      );
      const fresh = await client.request(
        'session.create',
        { workspace: daemon.workspace, title: null },
        { operation },
      );
      t.equal(fresh.ok, true, 'the id may be used again once it is no longer retained');
      t.equal(OPERATION_RETENTION_MS, 600_000);
    });

    t.test('reports a refused mutation as failed with its error', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const operation = op();
      await client.request('session.claim', {}, { session: 'ses_missing', operation });
      const found = await client.call('operation.lookup', { operation_id: operation });
      t.equal(found.status, 'failed');
      t.same(found.error, { code: 'unknown_session', message: 'no such session' });
      t.equal(found.result, null);
    });

    t.test('a session-scoped operation needs that session and its current control', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      const other = await daemon.connect(transport);
      const { session } = await claimedSession(client, daemon.workspace);
      const claimOperation = op();
      const claim = await client.call('session.claim', {}, { session, operation: claimOperation });
      const control = claim.control_token as string;

      const anonymous = await client.request('operation.lookup', { operation_id: claimOperation });
      t.equal(anonymous.error?.code, 'unauthorized');
      const foreign = await other.request(
        'operation.lookup',
        { operation_id: claimOperation },
        { session, control },
      );
      t.equal(foreign.error?.code, 'unauthorized', 'the token is bound to its connection');
      const halfEnvelope = await client.request(
        'operation.lookup',
        { operation_id: claimOperation },
        { session },
      );
      t.equal(halfEnvelope.error?.code, 'invalid_request');

      const found = await client.call(
        'operation.lookup',
        { operation_id: claimOperation },
        { session, control },
      );
      t.equal(found.status, 'completed');
      t.equal(found.method, 'session.claim');
      t.same(found.result, {
        grant_generation: claim.grant_generation,
        snapshot: { turn: null, terminal: null },
      });
      t.notMatch(JSON.stringify(found), control, 'the control token is never retained');
    });

    t.test('lookup is a read and its payload is strict', async (t) => {
      const daemon = await startDaemon(t);
      const client = await daemon.connect(transport);
      t.equal(
        (await client.request('operation.lookup', { operation_id: 'x' }, { operation: op() })).error?.code,
        'invalid_request',
      );
      t.equal(
        (await client.request('operation.lookup', { operation_id: 'bad id' })).error?.code,
        'invalid_payload',
      );
      t.equal((await client.request('operation.lookup', {})).error?.code, 'invalid_payload');
    });
  });
}
