import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import { DaemonCall } from '../../../core/agent/daemon-call.js';
import { HistoryStore } from '../../../core/history/history-store.js';
import { newId } from '../../../core/ids.js';
import { PROFILE_LIMITS, SERVICE_LIMITS, TURN_LIMITS } from '../../../core/limits.js';
import { MCP_LIMITS } from '../../../core/mcp/mcp-limits.js';
import { utf8ByteLength } from '../../../core/resources/unicode.js';
import { ActiveTurn } from '../../../core/turns/active-turn.js';
import {
  recoverInterruptedTurns,
  TERMINAL_DATA_BYTES,
  TURN_RECORDS,
  TurnHistory,
} from '../../../core/turns/turn-history.js';
import { pinnedWorkspace } from '../../helpers/confined.js';
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

const LONGEST_TOOL = `mcp_${'s'.repeat(MCP_LIMITS.name_bytes - 4)}`;

function sessionStore(t: Test): HistoryStore {
  const history = new HistoryStore(store(t));
  t.teardown(() => history.close());
  history.createSession(
    { session_id: 'ses_1', workspace: '/w', title: null, created_at: 1, updated_at: 1 },
    { kind: 'session.created', created_at: 1, data: {} },
  );
  return history;
}

/** The session's terminal record as `session.replay` pages it. */
function replayedTerminal(history: HistoryStore) {
  for (let after: number | null = 0; after !== null; ) {
    const page = history.records(
      'ses_1',
      after,
      SERVICE_LIMITS.page_limit_max,
      SERVICE_LIMITS.replay_page_bytes,
    );
    const terminal = page.items.find((record) => record.kind === TURN_RECORDS.terminal);
    if (terminal) return terminal;
    after = page.next;
  }
  return undefined;
}

t.test(
  'a terminal with 128 daemon calls, the largest plan and the largest answer is written to replay whole',
  async (t) => {
    const history = sessionStore(t);
    const turn = new ActiveTurn({
      turnId: newId('turn'),
      sessionId: 'ses_1',
      operationId: 'op-1',
      prompt: 'p',
      workspace: pinnedWorkspace('/w'),
      builtins: [],
      mcpTools: [],
      manifest: null,
      pin: null,
      selected: false,
    });
    await history.writer.beginTurn('ses_1', turn.turnId, {
      kind: TURN_RECORDS.user,
      created_at: 2,
      data: { turn_id: turn.turnId, prompt: 'p' },
    });
    turn.acceptText('\u0001'.repeat((turn.textBudget - 2) / 6));
    for (let i = 0; i < BUILTIN_LIMITS.calls_per_turn; i++) {
      const call = new DaemonCall({
        callId: newId('call'),
        providerCallId: `call_${i}`,
        name: LONGEST_TOOL,
        kind: 'mcp',
        parentCallId: i % 2 === 0 ? null : 'call_parent',
        arguments: {},
      });
      call.started();
      if (i < 64) call.reported({ ok: true, output: '' });
      else call.cancelled();
      turn.daemonCalls.set(call.callId, call);
    }
    turn.plan = Array.from({ length: BUILTIN_LIMITS.plan_steps }, () => ({
      step: '茶'.repeat(BUILTIN_LIMITS.plan_step_chars),
      status: 'in_progress' as const,
    }));
    const payload = {
      turn_id: turn.turnId,
      status: 'failed',
      error: { code: 'limit_exceeded', message: 'a limit would be exceeded' },
      assistant_text: turn.assistantText,
      activity_dropped: 0,
    };
    await new TurnHistory(history, fakeClock()).terminal(turn, payload);
    const terminal = replayedTerminal(history);
    t.equal(terminal?.omitted, false, 'it replays whole');
    const data = terminal!.data as Record<string, unknown> & { calls: Array<Record<string, unknown>> };
    t.ok(utf8ByteLength(JSON.stringify(data)) <= TERMINAL_DATA_BYTES);
    t.same(
      Object.fromEntries(Object.keys(payload).map((name) => [name, data[name]])),
      payload,
      'with its payload whole',
    );
    t.equal(data.calls.length + Number(data.calls_omitted ?? 0), BUILTIN_LIMITS.calls_per_turn);
    t.ok(
      data.calls.every((call) => call.external_effects === 'uncertain'),
      'the calls whose outcome is recorded are left out first',
    );
    t.equal(data.plan_omitted, BUILTIN_LIMITS.plan_steps, 'then the whole plan here');
    t.same(data.plan, []);
  },
);

t.test('a recovered terminal of a turn with 160 bound calls lists them all and replays whole', async (t) => {
  const history = sessionStore(t);
  const turnId = newId('turn');
  await history.writer.beginTurn('ses_1', turnId, {
    kind: TURN_RECORDS.user,
    created_at: 2,
    data: { turn_id: turnId, prompt: 'p' },
  });
  const callIds = Array.from({ length: PROFILE_LIMITS.calls_per_turn + BUILTIN_LIMITS.calls_per_turn }, () =>
    newId('call'),
  );
  // Written together, in one commit, as a turn's bindings are.
  await Promise.all(
    callIds.map((callId, i) =>
      history.writer.appendRecord('ses_1', {
        kind: TURN_RECORDS.call,
        created_at: 3,
        data: {
          turn_id: turnId,
          call_id: callId,
          ...(i >= PROFILE_LIMITS.calls_per_turn ? { name: LONGEST_TOOL, mcp: true } : {}),
        },
      }),
    ),
  );
  t.equal(recoverInterruptedTurns(history, fakeClock()), 1);
  const terminal = replayedTerminal(history);
  t.equal(terminal?.omitted, false);
  const data = terminal!.data as { calls: Array<{ call_id: string }>; calls_omitted?: number };
  t.same(
    data.calls.map((call) => call.call_id),
    callIds,
    'every call listed',
  );
  t.notOk('calls_omitted' in data);
});
