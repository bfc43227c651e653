import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { HistoryStore } from '../../../core/history/history-store.js';
import { TURN_LIMITS } from '../../../core/limits.js';
import { recoverInterruptedTurns, TURN_RECORDS, TurnHistory } from '../../../core/turns/turn-history.js';
import { fakeClock } from '../../helpers/fake-clock.js';

function store(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'turn-history-'));
  const file = join(dir, 'history.sqlite3');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return file;
}

t.test('a turn left active by a stopped daemon is recorded as interrupted at the next start', async (t) => {
  const file = store(t);
  const clock = fakeClock();
  const before = new HistoryStore(file);
  before.createSession(
    { session_id: 'ses_1', workspace: '/w', title: null, created_at: 1, updated_at: 1 },
    { kind: 'session.created', created_at: 1, data: {} },
  );
  await before.writer.beginTurn('ses_1', 'turn_1', {
    kind: TURN_RECORDS.user,
    created_at: 2,
    data: { turn_id: 'turn_1', prompt: 'p' },
  });
  before.appendRecord('ses_1', {
    kind: TURN_RECORDS.call,
    created_at: 3,
    data: { turn_id: 'turn_1', call_id: 'call_a' },
  });
  before.appendRecord('ses_1', {
    kind: TURN_RECORDS.call,
    created_at: 3,
    data: { turn_id: 'turn_1', call_id: 'call_b' },
  });
  before.appendRecord('ses_1', {
    kind: TURN_RECORDS.result,
    created_at: 4,
    data: { turn_id: 'turn_1', call_id: 'call_b', outcome: { status: 'success', value: {} } },
  });
  await before.close();

  const after = new HistoryStore(file);
  t.teardown(() => after.close());
  t.equal(recoverInterruptedTurns(after, clock), 1);
  t.same(after.activeTurns(), [], 'nothing is left active');
  const [terminal] = after.recordsOfKind('ses_1', 0, TURN_RECORDS.terminal);
  t.match(terminal?.data, {
    turn_id: 'turn_1',
    status: 'failed',
    error: { code: 'interrupted' },
    calls: [
      { call_id: 'call_a', external_effects: 'uncertain' },
      { call_id: 'call_b', external_effects: 'reported' },
    ],
  });
  t.equal(recoverInterruptedTurns(after, clock), 0, 'and it is recorded once');
});

t.test('context: the last completed exchanges of the session, oldest first, within the bound', async (t) => {
  const file = store(t);
  const clock = fakeClock();
  const history = new HistoryStore(file);
  t.teardown(() => history.close());
  history.createSession(
    { session_id: 'ses_1', workspace: '/w', title: null, created_at: 1, updated_at: 1 },
    { kind: 'session.created', created_at: 1, data: {} },
  );
  const turns = TURN_LIMITS.context_turns + 5;
  for (let i = 0; i < turns; i++) {
    const turnId = `turn_${i}`;
    await history.writer.beginTurn('ses_1', turnId, {
      kind: TURN_RECORDS.user,
      created_at: 2,
      data: { turn_id: turnId, prompt: `q${i}` },
    });
    const status = i === turns - 2 ? 'failed' : 'completed';
    history.endTurn('ses_1', turnId, {
      kind: TURN_RECORDS.terminal,
      created_at: 3,
      data: { turn_id: turnId, status, assistant_text: `a${i}` },
    });
  }
  await history.writer.beginTurn('ses_1', 'turn_now', {
    kind: TURN_RECORDS.user,
    created_at: 4,
    data: { turn_id: 'turn_now', prompt: 'now' },
  });
  const context = new TurnHistory(history, clock).context('ses_1', 'turn_now');
  const prompts = context.filter((message) => message.role === 'user').map((message) => message.content);
  t.equal(
    prompts.length,
    TURN_LIMITS.context_turns,
    'the most recent completed exchanges, the failed one left out',
  );
  t.equal(prompts.at(-1), `q${turns - 1}`, 'the most recent last');
  t.notOk(prompts.includes(`q${turns - 2}`));
  t.notOk(prompts.includes('now'), 'never the turn itself');
  t.same(context.slice(-2), [
    { role: 'user', content: `q${turns - 1}` },
    { role: 'assistant', content: `a${turns - 1}`, toolCalls: [] },
  ]);
});
