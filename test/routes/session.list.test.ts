import t from 'tap';
import { op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';

for (const transport of TRANSPORTS) {
  t.test(`session.list (${transport})`, async (t) => {
    const daemon = await startDaemon(t);
    const client = await daemon.connect(transport);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      const result = await client.call(
        'session.create',
        { workspace: daemon.workspace, title: `s${i}` },
        { operation: op() },
      );
      created.push(result.session_id as string);
    }

    t.test('pages through every session, oldest first, by cursor', async (t) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await client.call('session.list', { cursor, limit: 2 });
        const sessions = page.sessions as Array<{
          session_id: string;
          title: string;
          workspace: string;
          claimed: boolean;
        }>;
        t.ok(sessions.length <= 2);
        seen.push(...sessions.map((s) => s.session_id));
        cursor = page.next_cursor as string | null;
        pages++;
      } while (cursor !== null);
      t.same(seen, created);
      t.equal(pages, 3);
    });

    t.test('shows whether a session is claimed', async (t) => {
      await client.call('session.claim', {}, { session: created[0]!, operation: op() });
      const page = await client.call('session.list', { cursor: null, limit: 1 });
      const [first] = page.sessions as Array<{
        session_id: string;
        claimed: boolean;
        title: string;
        workspace: string;
      }>;
      t.equal(first?.claimed, true);
      t.equal(first?.title, 's0');
      t.equal(first?.workspace, daemon.workspace);
    });

    t.test('bad cursors and limits are invalid_payload', async (t) => {
      for (const payload of [
        { cursor: 'r.1', limit: 1 },
        { cursor: 'garbage', limit: 1 },
        { cursor: null, limit: 0 },
        { cursor: null, limit: 101 },
        { cursor: null, limit: 1.5 },
        { cursor: null },
      ]) {
        const refused = await client.request('session.list', payload);
        t.equal(refused.error?.code, 'invalid_payload', JSON.stringify(payload));
      }
    });
  });
}
