import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`session.replay (${transport})`, async (t) => {
    const daemon = await startDaemon(t);

    t.test('reads history without control, page by page', async (t) => {
      const owner = await daemon.connect(transport);
      const reader = await daemon.connect(transport);
      const { session, control } = await claimedSession(owner, daemon.workspace);
      for (let i = 0; i < 3; i++) {
        await owner.call(
          'session.close',
          {},
          {
            session,
            control: (await owner.call('session.claim', {}, { session, operation: op() }))
              .control_token as string,
            operation: op(),
          },
        );
      }
      void control;
      const kinds: string[] = [];
      const sequences: number[] = [];
      let cursor: string | null = null;
      do {
        const page = await reader.call('session.replay', { cursor, limit: 2 }, { session });
        for (const record of page.records as Array<{
          kind: string;
          sequence: number;
          created_at: number;
          omitted: boolean;
        }>) {
          kinds.push(record.kind);
          sequences.push(record.sequence);
          t.equal(record.omitted, false);
          t.type(record.created_at, 'number');
        }
        cursor = page.next_cursor as string | null;
      } while (cursor !== null);
      t.same(kinds, ['session.created', 'session.closed', 'session.closed', 'session.closed']);
      t.same(
        [...sequences].sort((a, b) => a - b),
        sequences,
        'records come in order',
      );
      t.equal(daemon.app.sessions.isClaimed(session), false, 'replay needs and takes no control');
    });

    t.test('replay is read-only: it carries no operation id and needs a session', async (t) => {
      const client = await daemon.connect(transport);
      const { session } = await claimedSession(client, daemon.workspace);
      t.equal(
        (await client.request('session.replay', { cursor: null, limit: 1 }, { session, operation: op() }))
          .error?.code,
        'invalid_request',
      );
      t.equal(
        (await client.request('session.replay', { cursor: null, limit: 1 })).error?.code,
        'invalid_request',
      );
      t.equal(
        (await client.request('session.replay', { cursor: null, limit: 1 }, { session: 'ses_none' })).error
          ?.code,
        'unknown_session',
      );
      t.equal(
        (await client.request('session.replay', { cursor: 's.1', limit: 1 }, { session })).error?.code,
        'invalid_payload',
      );
      t.equal(
        (await client.request('session.replay', { cursor: null }, { session })).error?.code,
        'invalid_payload',
        'limit has no default',
      );
    });
  });
}
