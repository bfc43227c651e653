import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { HistoryStore } from '../../../core/history/history-store.js';

function store(t: { teardown: (fn: () => Promise<void>) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'magid-history-'));
  const file = join(dir, 'state', 'history.sqlite3');
  const opened: HistoryStore[] = [];
  t.teardown(async () => {
    for (const s of opened) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    file,
    open: () => {
      const s = new HistoryStore(file);
      opened.push(s);
      return s;
    },
  };
}

const session = (id: string) => ({
  session_id: id,
  workspace: '/w',
  title: null,
  created_at: 1,
  updated_at: 1,
});
const record = (kind: string, data: Record<string, unknown> = {}) => ({ kind, created_at: 2, data });

t.test('sessions and records survive reopening', async (t) => {
  const { open } = store(t);
  const first = open();
  first.createSession(session('s1'), record('session.created'));
  first.appendRecord('s1', record('note', { n: 1 }));
  await first.close();
  const again = open();
  t.equal(again.countSessions(), 1);
  const page = again.records('s1', 0, 10, 24_000);
  t.same(
    page.items.map((r) => [r.kind, r.data]),
    [
      ['session.created', {}],
      ['note', { n: 1 }],
    ],
  );
  t.equal(page.next, null);
});

t.test("a session's workspace is read once, and null for a session that does not exist", async (t) => {
  const { open } = store(t);
  const history = open();
  t.equal(history.workspaceOf('s1'), null, 'no such session');
  history.createSession({ ...session('s1'), workspace: '/work/one' }, record('session.created'));
  t.equal(history.workspaceOf('s1'), '/work/one', 'a session created after a miss is found');
  let reads = 0;
  const read = history.session.bind(history);
  history.session = (sessionId) => {
    reads += 1;
    return read(sessionId);
  };
  t.equal(history.workspaceOf('s1'), '/work/one');
  t.equal(reads, 0, 'remembered');
  for (let n = 0; n < 1_100; n++) {
    history.createSession(session(`many${n}`), record('session.created'));
    history.workspaceOf(`many${n}`);
  }
  reads = 0;
  t.equal(history.workspaceOf('s1'), '/work/one', 'still right once forgotten');
  t.equal(reads, 1, 'read again after more sessions than are remembered');
});

t.test('grant generations only grow, across reopening', async (t) => {
  const { open } = store(t);
  const first = open();
  first.createSession(session('s1'), record('session.created'));
  t.equal(first.nextGrantGeneration('s1', 5), 1);
  t.equal(first.nextGrantGeneration('s1', 6), 2);
  await first.close();
  t.equal(open().nextGrantGeneration('s1', 7), 3);
});

t.test('a record over 65,536 bytes encoded is refused and nothing is written', async (t) => {
  const { open } = store(t);
  const s = open();
  s.createSession(session('s1'), record('session.created'));
  t.throws(() => s.appendRecord('s1', record('big', { text: 'x'.repeat(65_536) })), {
    code: 'limit_exceeded',
  });
  await t.rejects(s.writer.appendRecord('s1', record('big', { text: 'x'.repeat(65_536) })), {
    code: 'limit_exceeded',
    message: 'the history record would exceed the record limit',
  });
  t.equal(s.records('s1', 0, 10, 24_000).items.length, 1);
  s.appendRecord('s1', record('fits', { text: 'x'.repeat(60_000) }));
  await s.writer.appendRecord('s1', record('fits', { text: 'x'.repeat(60_000) }));
  t.equal(s.records('s1', 0, 10, 200_000).items.length, 3);
});

t.test(
  'pages are bounded by count and bytes; a record larger than a page is listed without its data',
  async (t) => {
    const { open } = store(t);
    const s = open();
    s.createSession(session('s1'), record('session.created'));
    for (let i = 0; i < 5; i++) s.appendRecord('s1', record('mid', { text: 'y'.repeat(9_000) }));
    s.appendRecord('s1', record('huge', { text: 'z'.repeat(40_000) }));
    const first = s.records('s1', 0, 100, 24_000);
    t.same(
      first.items.map((r) => r.kind),
      ['session.created', 'mid', 'mid'],
    );
    const second = s.records('s1', first.next!, 100, 24_000);
    t.same(
      second.items.map((r) => r.kind),
      ['mid', 'mid'],
    );
    const third = s.records('s1', second.next!, 100, 24_000);
    t.same(
      third.items.map((r) => r.kind),
      ['mid'],
    );
    const fourth = s.records('s1', third.next!, 100, 24_000);
    t.same(
      fourth.items.map((r) => [r.kind, r.data, r.omitted]),
      [['huge', null, true]],
    );
    t.equal(fourth.next, null);
  },
);

t.test('sessions list in creation order by page', async (t) => {
  const { open } = store(t);
  const s = open();
  for (const id of ['a', 'b', 'c']) s.createSession(session(id), record('session.created'));
  const first = s.listSessions(0, 2);
  t.same(
    first.items.map((r) => r.session_id),
    ['a', 'b'],
  );
  const second = s.listSessions(first.next!, 2);
  t.same(
    second.items.map((r) => r.session_id),
    ['c'],
  );
  t.equal(second.next, null);
});

t.test('the store is SQLite in WAL mode', async (t) => {
  const { open, file } = store(t);
  open();
  const Database = (await import('better-sqlite3')).default;
  const raw = new Database(file, { readonly: true });
  t.teardown(() => raw.close());
  t.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
});

t.test('durable writes of one turn of the event loop commit together, a failing one alone', async (t) => {
  const { open } = store(t);
  const history = open();
  history.createSession(session('s1'), record('session.created'));
  const first = history.writer.appendRecord('s1', record('note', { n: 1 }));
  const orphan = history.writer.appendRecord('no-such-session', record('note', { n: 2 }));
  const last = history.writer.appendRecord('s1', record('note', { n: 3 }));
  t.equal(history.records('s1', 0, 10, 65_536).items.length, 1, 'nothing is written before the commit');
  t.equal((await first).data.n, 1);
  await t.rejects(
    orphan,
    { code: 'internal_error', message: 'internal error' },
    'a record of an unknown session is refused by its foreign key, without SQLite words',
  );
  t.equal((await last).data.n, 3);
  t.equal(history.writer.transactions, 1, 'the three writes were one transaction');
  t.same(
    history.records('s1', 0, 10, 65_536).items.map((item) => item.data),
    [{}, { n: 1 }, { n: 3 }],
    'the writes around the refused one are committed, in order',
  );
  const queued = history.writer.appendRecord('s1', record('note', { n: 4 }));
  const closed = history.close();
  t.equal((await queued).data.n, 4, 'closing the store commits what was written');
  await closed;
  await t.rejects(history.writer.appendRecord('s1', record('note', { n: 5 })), { code: 'shutting_down' });
  t.same(
    open()
      .records('s1', 0, 10, 65_536)
      .items.map((item) => item.data?.n),
    [undefined, 1, 3, 4],
    'and it is there after reopening',
  );
});

t.test('a title is set once on an untitled session, durably, and moves updated_at', async (t) => {
  const { open } = store(t);
  const first = open();
  first.createSession(session('s1'), record('session.created'));
  first.createSession({ ...session('s2'), title: 'Kept' }, record('session.created'));
  t.equal(await first.writer.setTitle('s1', 'Tea notes', 50), true);
  t.equal(await first.writer.setTitle('s1', 'Another', 60), false, 'a title is never replaced');
  t.equal(await first.writer.setTitle('s2', 'Other', 60), false, 'nor a title given at creation');
  t.equal(await first.writer.setTitle('missing', 'Other', 60), false);
  await first.close();
  const again = open();
  t.match(again.session('s1'), { title: 'Tea notes', updated_at: 50 });
  t.match(again.session('s2'), { title: 'Kept', updated_at: 1 });
});
