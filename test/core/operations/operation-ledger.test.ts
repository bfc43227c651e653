import t from 'tap';
import { OperationLedger } from '../../../core/operations/operation-ledger.js';
import { fakeClock } from '../../helpers/fake-clock.js';

function ledger(capacity = 10) {
  const clock = fakeClock();
  return { clock, ledger: new OperationLedger({ clock, capacity, retentionMs: 600_000 }) };
}

t.test('an admitted operation is accepted until it settles', async (t) => {
  const { ledger: operations } = ledger();
  operations.begin('o1', 'session.create', null);
  t.match(operations.lookup('o1'), {
    status: 'accepted',
    result: null,
    error: null,
    method: 'session.create',
  });
  operations.settle('o1', { ok: true, result: { a: 1 } });
  t.match(operations.lookup('o1'), { status: 'completed', result: { a: 1 }, error: null });
});

t.test('a retained id is operation_already_known, for any method', async (t) => {
  const { ledger: operations } = ledger();
  operations.begin('o1', 'session.create', null);
  t.throws(() => operations.begin('o1', 'session.claim', 's'), { code: 'operation_already_known' });
  operations.settle('o1', { ok: false, error: { code: 'conflict', message: 'm' } });
  t.throws(() => operations.begin('o1', 'session.claim', 's'), { code: 'operation_already_known' });
  t.match(operations.lookup('o1'), { status: 'failed', error: { code: 'conflict' }, result: null });
});

t.test('settled outcomes are retained exactly 600 s', async (t) => {
  const { clock, ledger: operations } = ledger();
  operations.begin('o1', 'm', null);
  clock.advance(5_000);
  operations.settle('o1', { ok: true, result: {} });
  clock.advance(599_999);
  t.ok(operations.lookup('o1'), 'retained 1 ms before the end');
  clock.advance(1);
  t.equal(operations.lookup('o1'), undefined, 'gone at 600 s');
  operations.begin('o1', 'm', null);
  t.equal(operations.lookup('o1')?.status, 'accepted', 'the id is fresh again');
});

t.test('unsettled operations never expire', async (t) => {
  const { clock, ledger: operations } = ledger();
  operations.begin('o1', 'm', null);
  clock.advance(10_000_000);
  t.equal(operations.lookup('o1')?.status, 'accepted');
});

t.test('the ledger refuses when full and never evicts', async (t) => {
  const { clock, ledger: operations } = ledger(2);
  operations.begin('a', 'm', null);
  operations.begin('b', 'm', null);
  t.throws(() => operations.begin('c', 'm', null), { code: 'limit_exceeded' });
  t.ok(operations.lookup('a'));
  operations.settle('a', { ok: true, result: {} });
  clock.advance(600_000);
  operations.begin('c', 'm', null);
  t.equal(operations.size, 2);
});

t.test('accept records a result that stays visible until settlement', async (t) => {
  const { ledger: operations } = ledger();
  operations.begin('o1', 'turn.start', 's');
  operations.accept('o1', { turn_id: 'u' });
  t.match(operations.lookup('o1'), { status: 'accepted', result: { turn_id: 'u' } });
  operations.settle('o1', { ok: true, result: { turn_id: 'u', status: 'completed' } });
  operations.settle('o1', { ok: false, error: { code: 'conflict', message: 'x' } });
  t.equal(operations.lookup('o1')?.status, 'completed', 'the first settlement wins');
});

t.test('expiry stays exact over many settlements', async (t) => {
  const { clock, ledger: operations } = ledger(5000);
  for (let i = 0; i < 3000; i++) {
    operations.begin(`o${i}`, 'm', null);
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
