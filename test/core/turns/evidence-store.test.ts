import t from 'tap';
import { PROFILE_LIMITS } from '../../../core/limits.js';
import type { SaturationEvent } from '../../../core/saturation.js';
import { ActiveTurn } from '../../../core/turns/active-turn.js';
import { ApplicationCall } from '../../../core/turns/application-call.js';
import { callEvidence, evidenceBaseBytes, worstCaseCallBytes } from '../../../core/turns/call-evidence.js';
import { EvidenceStore } from '../../../core/turns/evidence-store.js';
import { pinnedWorkspace } from '../../helpers/confined.js';
import { fakeClock } from '../../helpers/fake-clock.js';

function turn(id: string, sessionId = 'ses_1'): ActiveTurn {
  return new ActiveTurn({
    turnId: id,
    sessionId,
    operationId: `op_${id}`,
    prompt: 'p',
    workspace: pinnedWorkspace('/tmp'),
    builtins: [],
    mcpTools: [],
    manifest: null,
    selected: true,
    pin: null,
  });
}

function call(turnId: string, index: number): ApplicationCall {
  return new ApplicationCall({
    turnId,
    sessionId: 'ses_1',
    callId: `call_${String(index).padStart(22, '0')}`,
    providerCallId: `c${index}`,
    tool: {
      name: 'lookup',
      resource_id: 'res_a',
      revision_id: 'rev_a',
      revision_sha256: 'f'.repeat(64),
      timeout_ms: 120_000,
    },
    contract: {} as never,
    executor: { executor_id: 'exe_a', executor_generation: 1 },
    arguments: '{}',
  });
}

/** Admits `subject` into `store` as the coordinator does: a room reserved, then filled. */
function retain(store: EvidenceStore, subject: ActiveTurn): void {
  store.reserve().fill(subject);
}

t.test('at most 256 turns of evidence: the 256th is admitted, the 257th refused', async (t) => {
  const store = new EvidenceStore(fakeClock());
  for (let i = 0; i < PROFILE_LIMITS.evidence_turns; i++) retain(store, turn(`turn_${i}`));
  t.throws(() => store.reserve(), { code: 'limit_exceeded' });
});

t.test('a reserved room counts before its turn is filled in, and a released one is free again', async (t) => {
  const store = new EvidenceStore(fakeClock(), { turns: 3 });
  const [first, second] = [store.reserve(), store.reserve(), store.reserve()];
  t.equal(store.size, 3, 'three turns being admitted at once take all the room');
  t.throws(() => store.reserve(), { code: 'limit_exceeded' }, 'a fourth admitted meanwhile is refused');
  first.release();
  first.release();
  t.equal(store.size, 2, 'a refused turn gives its room back, once');
  second.fill(turn('turn_b'));
  second.release();
  second.fill(turn('turn_c'));
  t.equal(store.size, 2, 'a filled room is the turn’s; the slot does nothing more');
  t.throws(() => store.read('ses_1', 'turn_c'), { code: 'unknown_turn' });
  const last = store.reserve();
  t.throws(() => store.reserve(), { code: 'limit_exceeded' });
  last.release();
  t.doesNotThrow(() => store.reserve());
});

t.test('settled turns free their room 600 s after their terminal; active ones never expire', async (t) => {
  const clock = fakeClock();
  const store = new EvidenceStore(clock, { turns: 2 });
  retain(store, turn('turn_a'));
  retain(store, turn('turn_b'));
  store.settled('turn_a');
  clock.advance(599_999);
  t.throws(() => store.reserve());
  clock.advance(1);
  t.doesNotThrow(() => store.reserve());
  clock.advance(10_000_000);
  t.equal(store.read('ses_1', 'turn_b').turn_id, 'turn_b', 'the active turn is still there');
  t.throws(() => store.read('ses_2', 'turn_b'), { code: 'unknown_turn' }, 'not for another session');
});

t.test('turns expire in the order they settled, each 600 s after its first terminal', async (t) => {
  const clock = fakeClock();
  const store = new EvidenceStore(clock);
  for (const id of ['turn_a', 'turn_b', 'turn_c']) retain(store, turn(id));
  store.settled('turn_c');
  clock.advance(100_000);
  store.settled('turn_a');
  clock.advance(100_000);
  store.settled('turn_c');
  t.equal(store.size, 3);
  clock.advance(400_000);
  t.equal(store.size, 2, 'turn_c went at 600 s after its terminal; settling it again changed nothing');
  t.throws(() => store.read('ses_1', 'turn_c'), { code: 'unknown_turn' });
  clock.advance(99_999);
  t.equal(store.read('ses_1', 'turn_a').turn_id, 'turn_a', 'turn_a keeps its own 600 s');
  clock.advance(1);
  t.equal(store.size, 1);
  clock.advance(10_000_000);
  t.equal(store.read('ses_1', 'turn_b').turn_id, 'turn_b', 'the turn that never settled stays');
});

t.test('a turn at exactly 30 KiB of evidence takes no further call', async (t) => {
  const clock = fakeClock();
  const base = evidenceBaseBytes('turn_a', null);
  const one = worstCaseCallBytes(call('turn_a', 0), clock);
  const store = new EvidenceStore(clock, { bytesPerTurn: base + 2 * one });
  retain(store, turn('turn_a'));
  t.equal(store.reserveCall('turn_a', call('turn_a', 0)), true);
  t.equal(store.reserveCall('turn_a', call('turn_a', 1)), true, 'exactly at the bound');
  t.equal(store.reserveCall('turn_a', call('turn_a', 2)), false, 'one over it');
  t.equal(store.reserveCall('turn_unknown', call('turn_a', 3)), false);
});

t.test('the worst case covers every state a call can report', async (t) => {
  const clock = fakeClock();
  const subject = call('turn_a', 7);
  const worst = worstCaseCallBytes(subject, clock);
  const states = [
    () => {},
    () => subject.awaitExecutor(clock, 60_000, () => {}),
    () => subject.dispatched(clock, () => {}),
    () => subject.fail('cancelled'),
  ];
  for (const next of states) {
    next();
    t.ok(Buffer.byteLength(JSON.stringify(callEvidence(subject, clock))) < worst);
  }
});

t.test('the turn bound is told once when it saturates and once when it has cleared', async (t) => {
  const clock = fakeClock();
  const events: SaturationEvent[] = [];
  const store = new EvidenceStore(clock, { turns: 8 }, (event) => events.push(event));
  for (let i = 0; i < 8; i++) retain(store, turn(`turn_${i}`));
  t.same(events, [], 'full, but nothing refused yet');
  for (let i = 0; i < 5; i++) t.throws(() => store.reserve(), { code: 'limit_exceeded' });
  t.same(events, [{ bound: 'evidence_turns', saturated: true, details: { retained: 8, bound: 8 } }], 'once');
  for (let i = 0; i < 3; i++) {
    store.settled(`turn_${i}`);
    clock.advance(1_000);
  }
  t.match(store.stats(), { retained: 8, bound: 8, saturated: true, frees_in_ms: 597_000 });
  clock.advance(597_000);
  t.equal(store.stats().retained, 7);
  retain(store, turn('turn_8'));
  t.throws(() => store.reserve(), 'refused at the edge again');
  clock.advance(1_000);
  t.equal(events.length, 1, 'seven of eight are not low enough to clear');
  clock.advance(1_000);
  t.same(
    events.slice(1),
    [{ bound: 'evidence_turns', saturated: false, details: { retained: 6, bound: 8 } }],
    'cleared at three quarters of the bound, at an expiry, with nothing asked of the store',
  );
  t.same(store.stats(), { retained: 6, bound: 8, saturated: false, frees_in_ms: null });
});

t.test('a released room can clear the saturation too', async (t) => {
  const events: SaturationEvent[] = [];
  const store = new EvidenceStore(fakeClock(), { turns: 4 }, (event) => events.push(event));
  const slots = [store.reserve(), store.reserve(), store.reserve(), store.reserve()];
  t.throws(() => store.reserve());
  slots[0]!.release();
  t.same(
    events.map((event) => event.saturated),
    [true, false],
    'three of four is three quarters',
  );
  t.doesNotThrow(() => store.reserve());
  t.throws(() => store.reserve());
  t.equal(events.length, 3, 'and a new saturation is told again');
});
