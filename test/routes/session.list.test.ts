import t from 'tap';
import { claimedSession, op, startDaemon, TRANSPORTS } from '../helpers/daemon.js';
import { skillResource } from './session.resources.fixture.js';
import { turnDaemon } from './turn.fixture.js';

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

    t.test('updated_at moves with a claim and with every history record, and nothing else', async (t) => {
      const { daemon, provider } = await turnDaemon(t);
      const owner = await daemon.connect(transport);
      const { session, control } = await claimedSession(owner, daemon.workspace);
      const times = async () => {
        const page = await owner.call('session.list', { cursor: null, limit: 100 });
        const [row] = page.sessions as Array<{ session_id: string; created_at: number; updated_at: number }>;
        t.equal(row?.session_id, session);
        return { created_at: row!.created_at, updated_at: row!.updated_at };
      };
      const start = daemon.clock.wallNow();
      t.strictSame(await times(), { created_at: start, updated_at: start }, 'creation and the first claim');

      daemon.clock.advance(1_000);
      await owner.call(
        'session.resources.register',
        { expected_revision: null, resource: skillResource('style') },
        { session, control, operation: op() },
      );
      await owner.call('session.resources.list', {}, { session, control });
      await owner.call('session.replay', { cursor: null, limit: 100 }, { session });
      await owner.call('session.release', {}, { session, control, operation: op() });
      t.strictSame(await times(), { created_at: start, updated_at: start }, 'registry, reads and release');

      daemon.clock.advance(1_000);
      const claim = await owner.call('session.claim', {}, { session, operation: op() });
      t.equal((await times()).updated_at, start + 2_000, 'a claim');

      daemon.clock.advance(1_000);
      provider.reply(['Hello.']);
      await owner.call(
        'turn.start',
        {
          prompt: 'hi',
          application: {
            expected_registry_revision: (
              await owner.call(
                'session.resources.list',
                {},
                { session, control: claim.control_token as string },
              )
            ).registry_revision,
            executor_id: null,
            executor_generation: null,
            tool_authorizations: [],
          },
        },
        { session, control: claim.control_token as string, operation: op() },
      );
      await owner.event('turn.terminal');
      t.equal((await times()).updated_at, start + 3_000, 'the records of a turn');

      daemon.clock.advance(1_000);
      await owner.call(
        'session.close',
        {},
        { session, control: claim.control_token as string, operation: op() },
      );
      t.equal((await times()).updated_at, start + 4_000, 'the session.closed record');
    });
  });
}
