import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { HistoryStore } from '../../../core/history/history-store.js';

function opened(t: { teardown: (fn: () => Promise<void>) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'magid-writer-'));
  const file = join(dir, 'history.sqlite3');
  const history = new HistoryStore(file);
  t.teardown(async () => {
    await history.close();
    rmSync(dir, { recursive: true, force: true });
  });
  history.createSession(
    { session_id: 's1', workspace: '/w', title: null, created_at: 1, updated_at: 1 },
    { kind: 'session.created', created_at: 1, data: {} },
  );
  return { file, history };
}

const note = (n: number, created_at = 2) => ({ kind: 'note', created_at, data: { n } });

t.test(
  'writes posted in one turn of the event loop are answered in order from one transaction',
  async (t) => {
    const { history } = opened(t);
    const { writer } = history;
    const writes = [
      writer.beginTurn('s1', 'turn_1', { kind: 'turn.user', created_at: 2, data: { prompt: 'p' } }),
      writer.appendRecord('s1', note(1)),
      writer.appendRecord('no-such-session', note(2)),
      writer.appendRecord('s1', note(3)),
      writer.setTitle('s1', 'Tea', 7),
    ];
    const [begun, first, orphan, last, titled] = await Promise.allSettled(writes);
    t.equal(writer.transactions, 1, 'one transaction, so one durable sync');
    t.match(begun, { status: 'fulfilled', value: { sequence: 2, kind: 'turn.user', data: { prompt: 'p' } } });
    t.match(first, { status: 'fulfilled', value: { sequence: 3, data: { n: 1 } } });
    t.match(
      orphan,
      { status: 'rejected', reason: { code: 'internal_error', message: 'internal error' } },
      'a write refused by a foreign key fails alone, with no SQLite message',
    );
    t.match(last, { status: 'fulfilled', value: { sequence: 4, data: { n: 3 } } });
    t.match(titled, { status: 'fulfilled', value: true });
    t.same(
      history.records('s1', 0, 10, 65_536).items.map((item) => item.sequence),
      [1, 2, 3, 4],
      'the main connection reads what the writer committed',
    );
    t.same(history.activeTurns(), [{ turn_id: 'turn_1', session_id: 's1', started_sequence: 2 }]);
    t.match(history.session('s1'), { title: 'Tea', updated_at: 7 });
    t.equal(await writer.setTitle('s1', 'Other', 8), false, 'a title is never replaced');

    const ended = await writer.endTurn('s1', 'turn_1', { kind: 'turn.terminal', created_at: 9, data: {} });
    t.equal(ended.sequence, 5);
    t.equal(writer.transactions, 3, 'writes posted after an answer take later transactions');
    t.same(history.activeTurns(), [], 'the terminal cleared the active mark');

    const warm = await Promise.all([4, 5, 6].map((n) => writer.appendRecord('s1', note(n))));
    t.same(
      warm.map((record) => record.sequence),
      [6, 7, 8],
    );
    t.equal(writer.transactions, 4, 'a running thread also commits the writes of one turn together');
  },
);

t.test("the main connection's writes wait for the writer's lock instead of failing", async (t) => {
  const { history } = opened(t);
  const written: Array<Promise<unknown>> = [];
  for (let round = 0; round < 20; round++) {
    for (let i = 0; i < 10; i++) written.push(history.writer.appendRecord('s1', note(round * 10 + i)));
    history.createSession(
      { session_id: `m${round}`, workspace: '/w', title: null, created_at: 1, updated_at: 1 },
      { kind: 'session.created', created_at: 1, data: {} },
    );
    t.equal(history.nextGrantGeneration('s1', 3), round + 1);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(written);
  t.equal(history.countSessions(), 21);
  t.same(
    history.records('s1', 0, 1_000, 1_000_000).items.map((item) => item.data?.n),
    [undefined, ...Array.from({ length: 200 }, (_, n) => n)],
    'the writer kept the order the records were written in',
  );
});

t.test('close commits and answers every write already posted before the connections close', async (t) => {
  const { history, file } = opened(t);
  const posted = [1, 2, 3].map((n) => history.writer.appendRecord('s1', note(n)));
  const closing = history.close();
  await t.rejects(history.writer.appendRecord('s1', note(4)), { code: 'shutting_down' });
  t.same(
    (await Promise.all(posted)).map((record) => record.sequence),
    [2, 3, 4],
  );
  await closing;
  const raw = new Database(file, { readonly: true });
  t.teardown(() => raw.close());
  t.same(
    raw
      .prepare("SELECT data FROM records WHERE kind = 'note' ORDER BY sequence")
      .all()
      .map((row) => JSON.parse((row as { data: string }).data).n),
    [1, 2, 3],
    'they are in the file',
  );
});

t.test('a writer thread that dies fails its pending writes, and the next write starts another', async (t) => {
  const { history } = opened(t);
  const { writer } = history;
  const lost = writer.appendRecord('s1', note(1));
  await writer.terminate();
  await t.rejects(lost, { code: 'internal_error', message: 'internal error' });
  const next = await writer.appendRecord('s1', note(2));
  t.equal(writer.transactions, 1, 'answered by a new thread');
  t.same(
    history.records('s1', next.sequence - 1, 10, 65_536).items.map((item) => item.data),
    [{ n: 2 }],
  );
  await writer.terminate();
  await t.rejects(
    history.close().then(() => writer.appendRecord('s1', note(3))),
    { code: 'shutting_down' },
    'a store whose thread is gone still closes',
  );
});
