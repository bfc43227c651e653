import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { codeOf, skillResource, until } from './session.resources.fixture.js';

/** The lookup of an id the daemon does not retain. */
const UNKNOWN = { method: null, status: 'unknown', result: null, error: null };

for (const transport of TRANSPORTS) {
  t.test(`operation.lookup after a disconnect (${transport})`, async (t) => {
    t.test('a lost reply of a session-scoped mutation: claim again, then look it up', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const { session, control, generation } = await claimedSession(first, daemon.workspace);
      const operation = op();
      // The reply arrives but is never read: as good as lost when the connection then breaks.
      const lost = await first.request(
        'session.resources.register',
        { expected_revision: null, resource: skillResource('style') },
        { session, control, operation },
      );
      first.close();
      await until(() => daemon.app.framing.connections.size === 0, 'the daemon to notice the close');

      const again = await daemon.connect(transport);
      const stale = await again.request(
        'operation.lookup',
        { operation_id: operation },
        { session, control },
      );
      t.equal(codeOf(stale), 'unauthorized', 'the old token ended with its connection');
      const claim = await again.call('session.claim', {}, { session, operation: op() });
      t.equal(claim.grant_generation, generation + 1);
      const found = await again.call(
        'operation.lookup',
        { operation_id: operation },
        { session, control: claim.control_token as string },
      );
      t.strictSame(
        found,
        {
          operation_id: operation,
          method: 'session.resources.register',
          status: 'completed',
          result: lost.result,
          error: null,
        },
        'the new token reads the outcome of the old connection',
      );
    });

    t.test(
      'a lost claim reply: claim again; the lookup shows the lost claim without its token',
      async (t) => {
        const daemon = await startDaemon(t);
        const first = await daemon.connect(transport);
        const created = await first.call(
          'session.create',
          { workspace: daemon.workspace, title: null },
          { operation: op() },
        );
        const session = created.session_id as string;
        const lostOperation = op();
        const lost = await first.call('session.claim', {}, { session, operation: lostOperation });
        first.close();

        const again = await daemon.connect(transport);
        const resent = await again.request('session.claim', {}, { session, operation: lostOperation });
        t.equal(codeOf(resent), 'operation_already_known', 'the lost claim is not claimed twice');
        const claim = await again.call('session.claim', {}, { session, operation: op() });
        const control = claim.control_token as string;
        t.equal(claim.grant_generation, (lost.grant_generation as number) + 1);
        const found = await again.call(
          'operation.lookup',
          { operation_id: lostOperation },
          { session, control },
        );
        t.strictSame(found, {
          operation_id: lostOperation,
          method: 'session.claim',
          status: 'completed',
          result: { grant_generation: lost.grant_generation, snapshot: { turn: null, terminal: null } },
          error: null,
        });
        t.notMatch(JSON.stringify(found), lost.control_token as string, 'the lost token cannot be recovered');
        const withLostToken = await again.request(
          'session.resources.list',
          {},
          { session, control: lost.control_token as string },
        );
        t.equal(codeOf(withLostToken), 'unauthorized', 'and no longer authorizes anything');
      },
    );

    t.test('unknown after a reconnect: never admitted, so the same id is safe to send', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const { session, control } = await claimedSession(first, daemon.workspace);
      const operation = op();
      const line = JSON.stringify({
        type: 'request',
        id: 'cut',
        method: 'session.resources.register',
        session_id: session,
        control_token: control,
        operation_id: operation,
        payload: { expected_revision: null, resource: skillResource('style') },
      });
      // The connection breaks before the line's newline: the daemon never reads a request.
      first.sendRaw(line);
      first.close();
      await until(() => daemon.app.framing.connections.size === 0, 'the daemon to notice the close');

      const again = await daemon.connect(transport);
      const claim = await again.call('session.claim', {}, { session, operation: op() });
      const envelope = { session, control: claim.control_token as string };
      const unknown = await again.request('operation.lookup', { operation_id: operation }, envelope);
      t.strictSame(unknown.result, { operation_id: operation, ...UNKNOWN });
      t.equal(
        unknown.instance_id,
        (JSON.parse(first.received[0]!) as { instance_id: string }).instance_id,
        'the same daemon instance: no restart lost the outcome',
      );

      const payload = { expected_revision: null, resource: skillResource('style') };
      const resent = await again.request('session.resources.register', payload, {
        ...envelope,
        operation,
      });
      t.equal(codeOf(resent), 'ok', 'sent again with the same operation id, it runs once');
      const twice = await again.request('session.resources.register', payload, { ...envelope, operation });
      t.equal(codeOf(twice), 'operation_already_known', 'a further copy is refused, not run');
      const found = await again.call('operation.lookup', { operation_id: operation }, envelope);
      t.match(found, { status: 'completed', result: resent.result });
    });

    t.test('requests read before the disconnect is noticed still run, and keep their outcome', async (t) => {
      const daemon = await startDaemon(t);
      const first = await daemon.connect(transport);
      const operations = [op(), op()];
      for (const operation of operations) {
        first.send('session.create', { workspace: daemon.workspace, title: operation }, { operation });
      }
      first.close();
      await until(() => daemon.app.framing.connections.size === 0, 'the daemon to notice the close');

      const again = await daemon.connect(transport);
      for (const operation of operations) {
        // `accepted` is a mutation still running (the workspace is checked on the filesystem): look again.
        let found = await again.call('operation.lookup', { operation_id: operation });
        while (found.status === 'accepted') {
          await new Promise((resolve) => setImmediate(resolve));
          found = await again.call('operation.lookup', { operation_id: operation });
        }
        t.match(found, { method: 'session.create', status: 'completed' }, 'created, its reply dropped');
      }
      const listed = await again.call('session.list', { cursor: null, limit: 100 });
      // Pipelined requests finish in either order, so the sessions may have been created in either.
      t.strictSame(
        (listed.sessions as Array<{ title: string }>).map((entry) => entry.title).sort(),
        [...operations].sort(),
        'both sessions exist',
      );
    });
  });
}
