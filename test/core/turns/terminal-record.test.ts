import t, { type Test } from 'tap';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import type { PlanStep } from '../../../core/agent/plan.js';
import { ERROR_MESSAGES } from '../../../core/errors.js';
import { recordPageBytes } from '../../../core/history/history-store.js';
import { newId } from '../../../core/ids.js';
import { PROFILE_LIMITS, SERVICE_LIMITS, WIRE_LIMITS } from '../../../core/limits.js';
import { MCP_LIMITS } from '../../../core/mcp/mcp-limits.js';
import { utf8ByteLength } from '../../../core/resources/unicode.js';
import { ActiveTurn } from '../../../core/turns/active-turn.js';
import type { ApplicationManifest } from '../../../core/turns/application-manifest.js';
import {
  TERMINAL_PAYLOAD_BYTES,
  type TerminalCall,
  terminalData,
} from '../../../core/turns/terminal-record.js';
import { TERMINAL_DATA_BYTES, TURN_RECORDS } from '../../../core/turns/turn-history.js';
import { pinnedWorkspace } from '../../helpers/confined.js';

const encodedBytes = (value: unknown) => utf8ByteLength(JSON.stringify(value));

function activeTurn(manifest: ApplicationManifest | null, selected: boolean): ActiveTurn {
  return new ActiveTurn({
    turnId: newId('turn'),
    sessionId: newId('ses'),
    operationId: 'op-1',
    prompt: 'p',
    workspace: pinnedWorkspace('/tmp'),
    builtins: [],
    mcpTools: [],
    manifest,
    pin: null,
    selected,
  });
}

/** The longest answer `turn` accepts, made of quotes (two bytes each once encoded), checked by the turn. */
function longestAnswer(t: Test, turn: ActiveTurn): string {
  const room = turn.textBudget - 2;
  const text = `${'"'.repeat(Math.floor(room / 2))}${room % 2 === 1 ? 'a' : ''}`;
  t.ok(turn.fits(text), 'the turn accepts the answer');
  t.notOk(turn.fits(`${text}x`), 'and not one byte more');
  turn.acceptText(text);
  return text;
}

/** The live terminal a turn ends with, at its worst for every member but the answer and manifest. */
function worstPayload(turn: ActiveTurn, receiverSelected: boolean): Record<string, unknown> {
  return {
    turn_id: turn.turnId,
    status: 'failed',
    error: { code: 'executor_unavailable', message: ERROR_MESSAGES.executor_unavailable },
    assistant_text: turn.assistantText,
    activity_dropped: Number.MAX_SAFE_INTEGER,
    ...(receiverSelected ? { application_manifest: turn.manifest } : {}),
  };
}

t.test('the bounds, by arithmetic from the limits', async (t) => {
  t.equal(
    TERMINAL_DATA_BYTES,
    SERVICE_LIMITS.replay_page_bytes - 64 - 'turn.terminal'.length,
    'a page less what the store counts beside the data',
  );
  t.equal(TERMINAL_DATA_BYTES, 30_643);
  t.equal(recordPageBytes(TURN_RECORDS.terminal, TERMINAL_DATA_BYTES), SERVICE_LIMITS.replay_page_bytes);
  const longestEnding = {
    status: 'failed',
    error: { code: 'executor_unavailable', message: ERROR_MESSAGES.executor_unavailable },
  };
  const parts = {
    turnId: '{"turn_id":"turn_0123456789012345678901"'.length,
    status: `,"status":"${longestEnding.status}"`.length,
    error: `,"error":${JSON.stringify(longestEnding.error)}`.length,
    answer: ',"assistant_text":'.length + PROFILE_LIMITS.assistant_text_bytes,
    drops: `,"activity_dropped":${Number.MAX_SAFE_INTEGER}`.length,
    manifest: ',"application_manifest":null'.length,
    close: 1,
  };
  t.same(parts, {
    turnId: 40,
    status: 18,
    error: 105,
    answer: 20_018,
    drops: 36,
    manifest: 28,
    close: 1,
  });
  const sum = Object.values(parts).reduce((total, part) => total + part, 0);
  t.equal(TERMINAL_PAYLOAD_BYTES, sum);
  t.equal(TERMINAL_PAYLOAD_BYTES, 20_246);
  t.equal(TERMINAL_DATA_BYTES - TERMINAL_PAYLOAD_BYTES, 10_397, 'at least this much for calls and plan');
  const codes = [
    'provider_error',
    'tool_timeout',
    'limit_exceeded',
    'interrupted',
    'internal_error',
  ] as const;
  for (const code of codes) {
    const ending = { status: 'failed', error: { code, message: ERROR_MESSAGES[code] } };
    t.ok(encodedBytes(ending) <= encodedBytes(longestEnding), `failing with ${code} takes no more`);
  }
  for (const status of ['completed', 'cancelled']) {
    t.ok(encodedBytes({ status, error: null }) <= encodedBytes(longestEnding), `ending ${status} neither`);
  }
});

t.test('the largest payloads reach the bound and fit every place a terminal goes', async (t) => {
  const ordinary = activeTurn(null, false);
  longestAnswer(t, ordinary);
  const selectedOrdinary = activeTurn(null, true);
  longestAnswer(t, selectedOrdinary);
  // A manifest whose field takes the profile's whole 18,000 bytes, escapes included.
  const field = (pad: string) => ({ application_manifest: { profile: 'application_resources_v1', pad } });
  const pad = '\\'.repeat((PROFILE_LIMITS.manifest_bytes - encodedBytes(field(''))) / 2);
  const manifest = field(pad).application_manifest as unknown as ApplicationManifest;
  t.equal(encodedBytes({ application_manifest: manifest }), PROFILE_LIMITS.manifest_bytes);
  const application = activeTurn(manifest, true);
  longestAnswer(t, application);

  const payloads = [
    ['an ordinary turn read by a profile connection', worstPayload(ordinary, true)],
    ['an ordinary turn', worstPayload(ordinary, false)],
    ['an ordinary turn started on a profile connection', worstPayload(selectedOrdinary, true)],
    ['an application turn', worstPayload(application, true)],
  ] as const;
  t.equal(encodedBytes(payloads[0][1]), TERMINAL_PAYLOAD_BYTES, 'the first reaches the bound exactly');
  for (const [what, payload] of payloads) {
    t.ok(encodedBytes(payload) <= TERMINAL_PAYLOAD_BYTES, `${what}: within the bound`);
    const event = {
      type: 'event',
      event: 'turn.terminal',
      session_id: newId('ses'),
      operation_id: 'o'.repeat(128),
      grant_generation: Number.MAX_SAFE_INTEGER,
      sequence: Number.MAX_SAFE_INTEGER,
      payload,
    };
    t.ok(encodedBytes(event.payload) <= WIRE_LIMITS.payload_bytes, `${what}: the live event's payload fits`);
    t.ok(encodedBytes(event) < WIRE_LIMITS.frame_bytes, `${what}: and its frame`);
    const lookup = {
      operation_id: 'o'.repeat(128),
      method: 'turn.start',
      status: 'completed',
      result: payload,
      error: null,
    };
    t.ok(encodedBytes(lookup) <= WIRE_LIMITS.payload_bytes, `${what}: the operation.lookup result fits`);
    const claim = {
      control_token: 'k'.repeat(43),
      grant_generation: Number.MAX_SAFE_INTEGER,
      snapshot: { turn: null, terminal: payload },
    };
    t.ok(encodedBytes(claim) <= WIRE_LIMITS.payload_bytes, `${what}: the claim snapshot fits`);
    const alone = terminalData(payload, [], null, TERMINAL_DATA_BYTES);
    t.same(alone, { ...payload, calls: [] }, `${what}: the record keeps the payload as it is`);
  }
});

const callId = () => newId('call');

/** 32 application calls and 128 daemon calls with the longest names, at their longest statuses. */
function worstCalls(effects: (index: number) => TerminalCall['external_effects']): TerminalCall[] {
  return [
    ...Array.from({ length: PROFILE_LIMITS.calls_per_turn }, (_, i) => ({
      call_id: callId(),
      status: 'succeeded',
      external_effects: effects(i),
    })),
    ...Array.from({ length: BUILTIN_LIMITS.calls_per_turn }, (_, i) => ({
      call_id: callId(),
      tool: `mcp_${'s'.repeat(MCP_LIMITS.name_bytes - 4)}`,
      status: 'cancelled',
      external_effects: effects(PROFILE_LIMITS.calls_per_turn + i),
    })),
  ];
}

/** 32 steps of 256 characters whose plan, encoded, takes exactly BUILTIN_LIMITS.plan_bytes. */
function largestPlan(): PlanStep[] {
  const texts = Array.from({ length: BUILTIN_LIMITS.plan_steps }, () =>
    Array.from({ length: BUILTIN_LIMITS.plan_step_chars }, () => 'a'),
  );
  const plan = () => texts.map((text) => ({ step: text.join(''), status: 'in_progress' as const }));
  let missing = BUILTIN_LIMITS.plan_bytes - encodedBytes(plan());
  for (const text of texts) {
    for (let i = 0; i < text.length && missing > 0; i++) {
      text[i] = missing >= 3 ? '🍵' : '"';
      missing -= missing >= 3 ? 3 : 1;
    }
  }
  return plan();
}

interface Fitted {
  calls: TerminalCall[];
  calls_omitted?: number;
  plan?: PlanStep[];
  plan_omitted?: number;
}

t.test('the worst case fits whole: 160 calls, the largest plan, the largest payload', async (t) => {
  const turn = activeTurn(null, false);
  longestAnswer(t, turn);
  const payload = worstPayload(turn, true);
  const plan = largestPlan();
  t.equal(encodedBytes(plan), BUILTIN_LIMITS.plan_bytes);
  for (const [what, effects] of [
    ['every outcome recorded', () => 'reported' as const],
    ['no outcome recorded', () => 'not_dispatched' as const],
    ['half of them recorded', (i: number) => (i % 2 === 0 ? ('reported' as const) : ('uncertain' as const))],
  ] as const) {
    const calls = worstCalls(effects);
    const data = terminalData(payload, calls, plan, TERMINAL_DATA_BYTES) as Record<string, unknown> & Fitted;
    const bytes = encodedBytes(data);
    t.ok(bytes <= TERMINAL_DATA_BYTES, `${what}: ${bytes} bytes fit`);
    t.ok(recordPageBytes(TURN_RECORDS.terminal, bytes) <= SERVICE_LIMITS.replay_page_bytes, 'one page');
    t.same(
      Object.fromEntries(Object.keys(payload).map((name) => [name, data[name]])),
      payload,
      'the payload is kept as it is',
    );
    t.equal(data.calls.length + (data.calls_omitted ?? 0), calls.length, 'every call kept or counted');
    t.equal(data.plan!.length + (data.plan_omitted ?? 0), plan.length, 'every step kept or counted');
    t.same(
      data.calls,
      calls.filter((call) => data.calls.some((kept) => kept.call_id === call.call_id)),
      'kept in their order',
    );
    t.same(data.plan, plan.slice(0, data.plan!.length), 'the first steps kept');
  }
});

t.test(
  'what is left out first: recorded calls, then steps, then the other calls, each from the last',
  async (t) => {
    const turn = activeTurn(null, false);
    turn.acceptText('ok');
    const payload = worstPayload(turn, false);
    const plan = Array.from({ length: 4 }, (_, i) => ({ step: `step ${i}`, status: 'pending' as const }));
    const calls = [
      { call_id: 'call_a', tool: 'read_file', status: 'succeeded', external_effects: 'reported' },
      { call_id: 'call_b', tool: 'read_file', status: 'cancelled', external_effects: 'uncertain' },
      { call_id: 'call_c', tool: 'read_file', status: 'succeeded', external_effects: 'reported' },
      { call_id: 'call_d', status: 'cancelled', external_effects: 'not_dispatched' },
    ] as const satisfies readonly TerminalCall[];
    const whole = terminalData(payload, calls, plan, Number.MAX_SAFE_INTEGER);
    t.same(whole, { ...payload, calls, plan }, 'nothing left out when it fits: no counts either');
    const ids = (data: Record<string, unknown>) =>
      (data as unknown as Fitted).calls.map((call) => call.call_id);
    const seen: Array<[string[], number | undefined, number, number | undefined]> = [];
    for (
      let bound = encodedBytes(whole);
      bound >= encodedBytes({ ...payload, calls: [], calls_omitted: 4, plan: [], plan_omitted: 4 });
      bound--
    ) {
      const data = terminalData(payload, calls, plan, bound) as Record<string, unknown> & Fitted;
      t.ok(encodedBytes(data) <= bound, `within ${bound}`);
      const step = [
        ids(data),
        data.calls_omitted,
        data.plan!.length,
        data.plan_omitted,
      ] as (typeof seen)[number];
      if (JSON.stringify(seen.at(-1)) !== JSON.stringify(step)) seen.push(step);
      // Nothing was left out that would have fit: the entry last left out does not fit beside the others.
      if (bound === encodedBytes(whole) - 1) t.same(ids(data), ['call_a', 'call_b', 'call_d']);
    }
    t.same(seen, [
      [['call_a', 'call_b', 'call_c', 'call_d'], undefined, 4, undefined],
      [['call_a', 'call_b', 'call_d'], 1, 4, undefined],
      [['call_b', 'call_d'], 2, 4, undefined],
      [['call_b', 'call_d'], 2, 3, 1],
      [['call_b', 'call_d'], 2, 2, 2],
      [['call_b', 'call_d'], 2, 1, 3],
      [['call_b', 'call_d'], 2, 0, 4],
      [['call_b'], 3, 0, 4],
      [[], 4, 0, 4],
    ]);
    t.same(
      terminalData(payload, calls, null, 0),
      { ...payload, calls: [], calls_omitted: 4 },
      'a turn without a plan has none',
    );
  },
);

t.test('each bound keeps as much as fits: one byte more keeps one entry more', async (t) => {
  const turn = activeTurn(null, false);
  turn.acceptText('ok');
  const payload = worstPayload(turn, false);
  const calls = worstCalls(() => 'reported');
  for (const kept of [0, 1, 80, 159]) {
    const keptCalls = calls.slice(0, kept);
    const exact = encodedBytes({ ...payload, calls: keptCalls, calls_omitted: calls.length - kept });
    const at = terminalData(payload, calls, null, exact) as unknown as Fitted;
    t.equal(at.calls.length, kept, `${kept} calls at exactly their size`);
    const under = terminalData(payload, calls, null, exact - 1) as unknown as Fitted;
    t.equal(under.calls.length, Math.max(0, kept - 1), 'one fewer a byte under it');
  }
});
