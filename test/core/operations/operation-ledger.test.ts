import t from 'tap';
import {
  type Admission,
  ENTRY_BYTES,
  type OperationBounds,
  OperationLedger,
  type RecoverySlot,
  SharedJson,
  SplicedJson,
} from '../../../core/operations/operation-ledger.js';
import { SPLICE_BYTES } from '../../../core/operations/retained-json.js';
import type { SaturationEvent } from '../../../core/saturation.js';
import { fakeClock } from '../../helpers/fake-clock.js';

const LARGE = { operations: 1_000_000, bytes: 1_000_000_000 };
const BOUNDS: OperationBounds = {
  table: LARGE,
  connection: LARGE,
  sessionSlot: LARGE,
  executorSlot: LARGE,
  refusals: 1_000_000,
  connectionRefusals: 1_000_000,
  retentionMs: 600_000,
};

const SESSION_S: RecoverySlot = { kind: 'session', id: 'ses_s' };
const A: Admission = { account: 'conn_a', slot: null };
const B: Admission = { account: 'conn_b', slot: null };
/** A recovery method sent by the right to session S's slot, on connection A or B. */
const A_RECOVERS: Admission = { account: 'conn_a', slot: SESSION_S };
const B_RECOVERS: Admission = { account: 'conn_b', slot: SESSION_S };
/** The same by the right to another session's, or an executor's, slot. */
const OTHER_SESSION: Admission = { account: 'conn_c', slot: { kind: 'session', id: 'ses_t' } };
const EXECUTOR: Admission = { account: 'conn_c', slot: { kind: 'executor', id: 'exe_e' } };
const REFUSED = { ok: false, error: { code: 'unknown_session', message: 'no such session' } } as const;

function ledger(bounds: Partial<OperationBounds> = {}) {
  const clock = fakeClock();
  const events: SaturationEvent[] = [];
  const operations = new OperationLedger({
    clock,
    bounds: { ...BOUNDS, ...bounds },
    saturation: (event) => events.push(event),
  });
  return { clock, events, operations };
}

/** The code a `begin` is refused with, or 'ok'. */
function beginCode(
  operations: OperationLedger,
  id: string,
  admission: Admission,
  method = 'session.create',
): string {
  try {
    operations.begin(id, method, null, admission);
    return 'ok';
  } catch (error) {
    return (error as { code: string }).code;
  }
}

function fill(operations: OperationLedger, prefix: string, count: number, admission: Admission): void {
  for (let i = 0; i < count; i++) {
    operations.begin(`${prefix}${i}`, 'session.create', null, admission);
    operations.settle(`${prefix}${i}`, { ok: true, result: {} });
  }
}

t.test('an admitted operation is accepted until it settles', async (t) => {
  const { operations } = ledger();
  operations.begin('o1', 'session.create', null, A);
  t.match(operations.lookup('o1'), {
    status: 'accepted',
    result: null,
    error: null,
    method: 'session.create',
  });
  operations.settle('o1', { ok: true, result: { a: 1 } });
  t.match(operations.lookup('o1'), { status: 'completed', result: { a: 1 }, error: null });
  operations.begin('o2', 'session.create', 's', A);
  operations.settleEncoded('o2', '{"b":[2]}');
  t.same(operations.lookup('o2'), {
    operation_id: 'o2',
    method: 'session.create',
    session_id: 's',
    status: 'completed',
    result: { b: [2] },
    error: null,
  });
});

t.test('a retained id is operation_already_known, for any method, in every store', async (t) => {
  const { operations } = ledger({ table: { operations: 1, bytes: 1_000_000 } });
  operations.begin('table', 'session.create', null, A);
  t.equal(beginCode(operations, 'table', A, 'session.claim'), 'operation_already_known');
  operations.settle('table', { ok: false, error: { code: 'internal_error', message: 'internal error' } });
  t.equal(beginCode(operations, 'table', B, 'session.claim'), 'operation_already_known', 'a settled one too');
  t.match(operations.lookup('table'), { status: 'failed', error: { code: 'internal_error' }, result: null });
  operations.begin('slot', 'turn.stop', 's', A_RECOVERS);
  t.equal(beginCode(operations, 'slot', B), 'operation_already_known', 'one in a recovery slot');
  operations.begin('refused', 'session.claim', null, A_RECOVERS);
  operations.settle('refused', REFUSED);
  t.equal(beginCode(operations, 'refused', B), 'operation_already_known', 'a retained refusal');
  t.same(operations.lookup('refused'), {
    operation_id: 'refused',
    method: 'session.claim',
    session_id: null,
    status: 'failed',
    result: null,
    error: { code: 'unknown_session', message: 'no such session' },
  });
});

t.test(
  'settled outcomes are retained exactly 600 s, in the table, a recovery slot and the refusals',
  async (t) => {
    const { clock, operations } = ledger({ table: { operations: 1, bytes: 1_000_000 } });
    operations.begin('table', 'm', null, A);
    operations.begin('slot', 'turn.stop', null, A_RECOVERS);
    operations.begin('refused', 'turn.stop', null, A_RECOVERS);
    clock.advance(5_000);
    operations.settle('table', { ok: true, result: {} });
    operations.settle('slot', { ok: true, result: {} });
    operations.settle('refused', REFUSED);
    t.match(operations.stats().recovery_slots, { slots: 1, retained: 1 });
    clock.advance(599_999);
    for (const id of ['table', 'slot', 'refused']) t.ok(operations.lookup(id), `${id}: retained 1 ms before`);
    clock.advance(1);
    t.same(
      operations.stats().recovery_slots,
      { slots: 0, retained: 0, bytes: 0, full: 0 },
      'the slot is gone',
    );
    for (const id of ['table', 'slot', 'refused']) {
      t.equal(operations.lookup(id), undefined, `${id}: gone at 600 s`);
      t.equal(beginCode(operations, id, B_RECOVERS), 'ok', `${id}: the id is fresh again`);
    }
  },
);

t.test('unsettled operations never expire', async (t) => {
  const { clock, operations } = ledger();
  operations.begin('o1', 'm', null, A);
  clock.advance(10_000_000);
  t.equal(operations.lookup('o1')?.status, 'accepted');
});

t.test('accept records a result that stays visible until settlement', async (t) => {
  const { operations } = ledger();
  operations.begin('o1', 'turn.start', 's', A);
  operations.accept('o1', { turn_id: 'u' });
  t.match(operations.lookup('o1'), { status: 'accepted', result: { turn_id: 'u' } });
  operations.settle('o1', { ok: true, result: { turn_id: 'u', status: 'completed' } });
  operations.settle('o1', { ok: false, error: { code: 'conflict', message: 'x' } });
  operations.accept('o1', { turn_id: 'v' });
  t.match(
    operations.lookup('o1'),
    { status: 'completed', result: { status: 'completed' } },
    'the first wins',
  );
});

t.test(
  'a full table refuses other mutations and never evicts; recovery methods sent by right use their slot',
  async (t) => {
    const { clock, operations } = ledger({ table: { operations: 2, bytes: 1_000_000 } });
    fill(operations, 'a', 2, A);
    t.equal(beginCode(operations, 'c', B), 'limit_exceeded', 'a third mutation of another connection');
    t.ok(operations.lookup('a0') && operations.lookup('a1'), 'nothing was evicted');
    t.equal(operations.lookup('c'), undefined, 'nothing of the refused one is retained');
    t.equal(beginCode(operations, 'stop', B_RECOVERS, 'turn.stop'), 'ok', 'a recovery method gets through');
    t.equal(beginCode(operations, 'stop2', B, 'turn.stop'), 'limit_exceeded', 'the same without its right');
    t.match(operations.stats(), {
      operations: { retained: 2, bound: 2, saturated: true },
      recovery_slots: { slots: 1, retained: 1, full: 0 },
    });
    clock.advance(600_000);
    t.equal(beginCode(operations, 'c', B), 'ok', 'room again once outcomes expired');
  },
);

t.test('the table is bounded by bytes too, each entry charged its bookkeeping and its strings', async (t) => {
  const result = { text: 'é'.repeat(100) };
  const resultBytes = Buffer.byteLength(JSON.stringify(result));
  const { operations } = ledger();
  operations.begin('o1', 'm', 'ses_1', A);
  t.equal(operations.stats().operations.bytes, ENTRY_BYTES + 2 + 5, 'running: its ids');
  operations.accept('o1', result);
  t.equal(operations.stats().operations.bytes, ENTRY_BYTES + 2 + 5 + resultBytes, 'accepted: and its result');
  operations.settle('o1', { ok: true, result: {} });
  t.equal(operations.stats().operations.bytes, ENTRY_BYTES + 2 + 5 + 2, 'settled: its final result');

  const bound = 3 * (ENTRY_BYTES + 2 + 2);
  const small = ledger({ table: { operations: 100, bytes: bound } }).operations;
  fill(small, 'b', 3, A);
  t.equal(small.stats().operations.bytes, bound);
  t.equal(beginCode(small, 'b3', B), 'limit_exceeded', 'at the byte bound');
  t.equal(beginCode(small, 'b3', B_RECOVERS, 'turn.stop'), 'ok', 'but recovery by right has its slot');
});

t.test('one connection holds at most its share of the table, by count and by bytes', async (t) => {
  const { operations } = ledger({
    table: { operations: 10, bytes: 1_000_000 },
    connection: { operations: 3, bytes: 1_000_000 },
  });
  fill(operations, 'a', 3, A);
  t.equal(beginCode(operations, 'a3', A), 'limit_exceeded', 'one past its share');
  try {
    operations.begin('a3', 'm', null, A);
  } catch (error) {
    t.equal((error as Error).message, 'this connection retains its share of operations');
  }
  t.equal(beginCode(operations, 'b0', B), 'ok', 'another connection still has room');
  t.equal(
    beginCode(operations, 'a3', A_RECOVERS, 'session.claim'),
    'ok',
    'its own recovery by right uses its slot',
  );
  t.match(operations.stats(), { connections_at_share: 1 });

  const bytes = ledger({ connection: { operations: 100, bytes: 2 * (ENTRY_BYTES + 2 + 2) } }).operations;
  fill(bytes, 'a', 2, A);
  t.equal(beginCode(bytes, 'a2', A), 'limit_exceeded', 'its share of bytes');
  t.equal(beginCode(bytes, 'b0', B), 'ok');
});

t.test('each session and each executor has its own slot: no one fills another one', async (t) => {
  const { operations } = ledger({
    table: { operations: 1, bytes: 1_000_000 },
    sessionSlot: { operations: 3, bytes: 1_000_000 },
    executorSlot: { operations: 5, bytes: 1_000_000 },
  });
  fill(operations, 't', 1, A);
  // A flood: the claims of a thousand sessions, each filling its own slot and one refused past it.
  for (let session = 0; session < 1_000; session++) {
    const flood: Admission = {
      account: `conn_f${session % 64}`,
      slot: { kind: 'session', id: `ses_${session}` },
    };
    for (let claim = 0; claim < 4; claim++)
      beginCode(operations, `f${session}-${claim}`, flood, 'session.claim');
  }
  t.match(operations.stats().recovery_slots, { slots: 1_000, retained: 3_000, full: 1_000 });
  t.equal(beginCode(operations, 'a0', A_RECOVERS, 'turn.stop'), 'ok', "a session's own slot is untouched");
  t.equal(beginCode(operations, 'a1', B_RECOVERS, 'session.claim'), 'ok', 'a claim from a new connection');
  t.equal(beginCode(operations, 'a2', A_RECOVERS, 'session.close'), 'ok');
  t.equal(beginCode(operations, 'a3', A_RECOVERS), 'limit_exceeded', 'one past its own slot');
  try {
    operations.begin('a3', 'turn.stop', null, A_RECOVERS);
  } catch (error) {
    t.equal((error as Error).message, 'this session or executor retains its room for recovery');
  }
  t.equal(beginCode(operations, 'o0', OTHER_SESSION), 'ok', "another session's slot");
  for (let i = 0; i < 5; i++) t.equal(beginCode(operations, `e${i}`, EXECUTOR), 'ok', `executor ${i}`);
  t.equal(beginCode(operations, 'e5', EXECUTOR), 'limit_exceeded', "past the executor's own bound");
  t.match(operations.stats().recovery_slots, { slots: 1_003, retained: 3_009, full: 1_002 });
});

t.test('a slot is bounded by bytes too', async (t) => {
  const entry = ENTRY_BYTES + 2 + 2;
  const { operations } = ledger({
    table: { operations: 1, bytes: 1_000_000 },
    sessionSlot: { operations: 100, bytes: 2 * entry },
  });
  fill(operations, 't', 1, A);
  const settle = (id: string) => operations.settle(id, { ok: true, result: {} });
  t.equal(beginCode(operations, 'a0', A_RECOVERS), 'ok');
  settle('a0');
  t.equal(beginCode(operations, 'a1', B_RECOVERS), 'ok');
  settle('a1');
  t.equal(beginCode(operations, 'a2', A_RECOVERS), 'limit_exceeded', "past the slot's bytes");
  t.match(operations.stats().recovery_slots, { slots: 1, retained: 2, bytes: 2 * entry, full: 1 });
  t.equal(beginCode(operations, 'o0', OTHER_SESSION), 'ok', 'another slot has its own bytes');
});

t.test('a shared part counts once in each bound, however many outcomes hold it', async (t) => {
  const { clock, operations } = ledger({
    table: { operations: 100, bytes: 1_000_000 },
    connection: { operations: 100, bytes: 1_000_000 },
  });
  const snapshot = new SharedJson(
    JSON.stringify({ turn: null, terminal: { assistant_text: 'é'.repeat(10_000) } }),
  );
  t.equal(snapshot.bytes, Buffer.byteLength('{"turn":null,"terminal":{"assistant_text":""}}') + 20_000);
  const claim = (id: string, generation: number, admission: Admission) => {
    operations.begin(id, 'session.claim', 'ses_s', admission);
    operations.settleSpliced(
      id,
      new SplicedJson(`{"grant_generation":${generation},"snapshot":`, snapshot, '}'),
    );
  };
  const own = (id: string, generation: number) =>
    ENTRY_BYTES +
    SPLICE_BYTES +
    id.length +
    'ses_s'.length +
    `{"grant_generation":${generation},"snapshot":}`.length;
  for (let i = 1; i <= 9; i++) claim(`c${i}`, i, A);
  t.equal(
    operations.stats().operations.bytes,
    snapshot.bytes + [1, 2, 3, 4, 5, 6, 7, 8, 9].reduce((sum, i) => sum + own(`c${i}`, i), 0),
    'the snapshot once, beside what each claim holds on its own',
  );
  t.same(operations.lookup('c3'), {
    operation_id: 'c3',
    method: 'session.claim',
    session_id: 'ses_s',
    status: 'completed',
    result: { grant_generation: 3, snapshot: JSON.parse(snapshot.json) },
    error: null,
  });
  clock.advance(1_000);
  claim('c10', 10, B);
  clock.advance(599_000);
  t.equal(
    operations.stats().operations.bytes,
    snapshot.bytes + own('c10', 10),
    'still counted while one claim holds it',
  );
  clock.advance(1_000);
  t.equal(operations.stats().operations.bytes, 0, 'and no more once none does');

  const slots = ledger({ table: { operations: 1, bytes: 1_000_000 } }).operations;
  fill(slots, 't', 1, A);
  for (let i = 1; i <= 5; i++) {
    slots.begin(`s${i}`, 'session.claim', 'ses_s', A_RECOVERS);
    slots.settleSpliced(`s${i}`, new SplicedJson(`{"grant_generation":${i},"snapshot":`, snapshot, '}'));
  }
  t.equal(
    slots.stats().recovery_slots.bytes,
    snapshot.bytes + [1, 2, 3, 4, 5].reduce((sum, i) => sum + own(`s${i}`, i), 0),
    'in a slot too',
  );
});

t.test('refusals leave the table: a flood of them takes no room from real outcomes', async (t) => {
  const { operations } = ledger({
    table: { operations: 5, bytes: 1_000_000 },
    connection: { operations: 4, bytes: 1_000_000 },
    refusals: 100,
    connectionRefusals: 10,
  });
  for (let i = 0; i < 1_000; i++) {
    operations.begin(`f${i}`, 'session.claim', null, A_RECOVERS);
    operations.settle(`f${i}`, REFUSED);
  }
  t.match(operations.stats(), { operations: { retained: 0 }, refusals: { retained: 10 } });
  t.equal(operations.lookup('f989'), undefined, "past the connection's share its oldest are forgotten");
  t.equal(beginCode(operations, 'f0', A), 'ok', 'a forgotten id runs as new');
  operations.settle('f0', { ok: true, result: {} });
  for (let i = 990; i < 1_000; i++) {
    t.equal(operations.lookup(`f${i}`)?.status, 'failed');
    t.equal(beginCode(operations, `f${i}`, A), 'operation_already_known');
  }
  fill(operations, 'b', 4, B);
  t.equal(operations.stats().operations.retained, 5, 'the table took every real outcome');
});

t.test('past the store of refusals the oldest of all is forgotten', async (t) => {
  const { clock, operations } = ledger({ refusals: 4, connectionRefusals: 3 });
  for (const [id, admission] of [
    ['a0', A],
    ['b0', B],
    ['a1', A],
    ['b1', B],
    ['a2', A],
  ] as const) {
    operations.begin(id, 'session.claim', null, admission);
    operations.settle(id, REFUSED);
    clock.advance(1_000);
  }
  t.equal(operations.lookup('a0'), undefined, 'the oldest went');
  t.same(
    ['b0', 'a1', 'b1', 'a2'].map((id) => operations.lookup(id)?.status),
    ['failed', 'failed', 'failed', 'failed'],
  );
  t.match(operations.stats().refusals, { retained: 4, bound: 4, saturated: true });
  clock.advance(600_000 - 4_000 - 1);
  t.ok(operations.lookup('b0'), 'the rest expire at their own time');
  clock.advance(1);
  t.equal(operations.lookup('b0'), undefined);
  t.equal(operations.stats().refusals.retained, 3);
});

t.test("a connection's refusals stay counted as its own when the store forgets its oldest", async (t) => {
  const { operations } = ledger({ refusals: 3, connectionRefusals: 2 });
  const refuse = (id: string, admission: Admission) => {
    operations.begin(id, 'session.claim', null, admission);
    operations.settle(id, REFUSED);
  };
  refuse('a0', A);
  refuse('b0', B);
  refuse('b1', B);
  refuse('a1', A);
  refuse('a2', A);
  t.same(
    ['a0', 'b0', 'b1', 'a1', 'a2'].map((id) => operations.lookup(id) !== undefined),
    [false, false, true, true, true],
    'the store forgot the oldest of all twice',
  );
  refuse('a3', A);
  t.same(
    ['b1', 'a1', 'a2', 'a3'].map((id) => operations.lookup(id) !== undefined),
    [true, false, true, true],
    'then the connection at its share forgot its own oldest, not another',
  );
});

t.test('refusals forgotten early keep expiry exact and the store compact', async (t) => {
  const { clock, operations } = ledger({ connectionRefusals: 2 });
  operations.begin('b', 'session.claim', null, B);
  operations.settle('b', REFUSED);
  for (let i = 0; i < 20_000; i++) {
    operations.begin(`a${i}`, 'session.claim', null, A);
    operations.settle(`a${i}`, REFUSED);
  }
  t.equal(operations.size, 3);
  clock.advance(599_999);
  t.ok(operations.lookup('b'));
  clock.advance(1);
  t.equal(operations.lookup('b'), undefined, 'the refusal behind 20,000 forgotten ones expires on time');
  t.equal(operations.size, 0);
});

t.test('expiry stays exact over many settlements', async (t) => {
  const { clock, operations } = ledger();
  for (let i = 0; i < 3000; i++) {
    operations.begin(`o${i}`, 'm', null, A);
    operations.settle(`o${i}`, { ok: true, result: {} });
    clock.advance(100);
  }
  // o<i> settled at i * 100 ms; now is 300,000 and moves to 600,000.
  clock.advance(300_000);
  t.equal(operations.lookup('o0'), undefined);
  t.ok(operations.lookup('o1'));
  t.equal(operations.size, 2999);
  clock.advance(100);
  t.equal(operations.lookup('o1'), undefined);
  t.ok(operations.lookup('o2'));
  t.equal(operations.size, 2998);
});

t.test('each bound is told once when it saturates and once when it clears', async (t) => {
  const { clock, events, operations } = ledger({
    table: { operations: 4, bytes: 1_000_000 },
    sessionSlot: { operations: 1, bytes: 1_000_000 },
  });
  fill(operations, 'a', 4, A);
  for (let i = 0; i < 10; i++) beginCode(operations, `x${i}`, B);
  t.same(events, [
    {
      bound: 'operations',
      saturated: true,
      details: { retained: 4, bound: 4, bytes: 4 * (ENTRY_BYTES + 2 + 2), bytes_bound: 1_000_000 },
    },
  ]);
  beginCode(operations, 'r0', B_RECOVERS);
  beginCode(operations, 'r1', B_RECOVERS);
  beginCode(operations, 'r2', B_RECOVERS);
  beginCode(operations, 'o0', OTHER_SESSION);
  beginCode(operations, 'o1', OTHER_SESSION);
  t.same(
    events.slice(1),
    [{ bound: 'recovery_slot', saturated: true, details: { kind: 'session', id: 'ses_s' } }],
    'a full slot once, whichever slot',
  );
  t.equal(operations.stats().recovery_slots.full, 2);
  operations.settle('r0', { ok: true, result: {} });
  operations.settle('o0', { ok: true, result: {} });
  clock.advance(600_000);
  t.same(
    events.slice(2).map((event) => [event.bound, event.saturated]),
    [
      ['operations', false],
      ['recovery_slot', false],
    ],
    'both cleared at the expiry, with nothing asked of the ledger',
  );
  t.match(events[2], { details: { retained: 0 } });
  t.same(operations.stats().recovery_slots, { slots: 0, retained: 0, bytes: 0, full: 0 });
});

t.test('a saturated bound clears only at three quarters of it', async (t) => {
  const { clock, events, operations } = ledger({ table: { operations: 8, bytes: 1_000_000 } });
  for (let i = 0; i < 8; i++) {
    fill(operations, `a${i}-`, 1, A);
    clock.advance(1_000);
  }
  beginCode(operations, 'x', B);
  // a0- settled at 0 s, a7- at 7 s: at 600 s one expires (7 left), at 601 s two (6 = three quarters).
  clock.advance(600_000 - 8_000);
  t.equal(operations.stats().operations.retained, 7);
  fill(operations, 'b', 1, B);
  t.equal(beginCode(operations, 'y', B), 'limit_exceeded', 'refused at the edge again');
  t.equal(events.length, 1, 'no second line for the refusals at the edge');
  clock.advance(2_000);
  t.same(
    events.map((event) => [event.bound, event.saturated]),
    [
      ['operations', true],
      ['operations', false],
    ],
  );
  t.equal(operations.stats().operations.retained, 6);
});

t.test(
  'connection shares are told once, whichever connection reaches one, until none is at it',
  async (t) => {
    const { clock, events, operations } = ledger({
      connection: { operations: 4, bytes: 1_000_000 },
      connectionRefusals: 4,
    });
    fill(operations, 'a', 4, A);
    beginCode(operations, 'a4', A);
    beginCode(operations, 'a5', A);
    for (let i = 0; i < 5; i++) {
      operations.begin(`r${i}`, 'session.claim', null, B_RECOVERS);
      operations.settle(`r${i}`, REFUSED);
    }
    t.same(events, [
      {
        bound: 'operation_share',
        saturated: true,
        details: { connection_id: 'conn_a', share: 'operations' },
      },
    ]);
    t.equal(operations.stats().connections_at_share, 2, 'both connections are at a share');
    clock.advance(600_000);
    t.same(events.slice(1), [
      { bound: 'operation_share', saturated: false, details: { connections_at_share: 0 } },
    ]);
    t.equal(operations.stats().connections_at_share, 0);
  },
);

t.test(
  'the store of refusals is told when it forgets others, not for a connection forgetting its own',
  async (t) => {
    const { clock, events, operations } = ledger({ refusals: 4, connectionRefusals: 4 });
    for (let i = 0; i < 4; i++) {
      operations.begin(`a${i}`, 'session.claim', null, A);
      operations.settle(`a${i}`, REFUSED);
    }
    t.same(events, []);
    operations.begin('b0', 'session.claim', null, B);
    operations.settle('b0', REFUSED);
    operations.begin('b1', 'session.claim', null, B);
    operations.settle('b1', REFUSED);
    t.same(events, [{ bound: 'refusals', saturated: true, details: { retained: 4, bound: 4 } }]);
    clock.advance(600_000);
    t.same(events.slice(1), [{ bound: 'refusals', saturated: false, details: { retained: 0, bound: 4 } }]);
  },
);

t.test('stats say when the oldest settled outcome of the table frees its room', async (t) => {
  const { clock, operations } = ledger();
  t.equal(operations.stats().operations.frees_in_ms, null, 'nothing settled');
  operations.begin('o1', 'm', null, A);
  t.equal(operations.stats().operations.frees_in_ms, null, 'running');
  operations.settle('o1', { ok: true, result: {} });
  clock.advance(250_000);
  t.equal(operations.stats().operations.frees_in_ms, 350_000);
});
