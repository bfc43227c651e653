import t from 'tap';
import type { PendingCall } from '../../../core/executors/executor-types.js';
import { boundPendingCalls, noPendingCalls } from '../../../core/executors/pending-calls.js';

function call(index: number): PendingCall {
  return {
    session_id: 'ses_1',
    turn_id: 'turn_1',
    call_id: `call_${index}`,
    provider_call_id: `provider_${index}`,
    name: 'read_file',
    resource_id: 'res_1',
    revision_id: 'rev_1',
    revision_sha256: 'c'.repeat(64),
    status: index % 2 === 0 ? 'pending' : 'waiting_for_executor',
    wait_kind: index % 2 === 0 ? 'execution' : 'availability',
    remaining_ms: index * 100,
  };
}

t.test('keeps at most 32 calls, in order', async (t) => {
  const calls = Array.from({ length: 33 }, (_, i) => call(i));
  const bounded = boundPendingCalls(calls);
  t.equal(bounded.length, 32);
  t.same(bounded, calls.slice(0, 32));
  t.same(boundPendingCalls(calls.slice(0, 3)), calls.slice(0, 3));
  t.same(boundPendingCalls([]), []);
});

t.test('copies only the declared members, so arguments never pass', async (t) => {
  const withExtras = { ...call(1), arguments: { path: 'a' }, timeout_ms: 5, result: 'x' };
  const [bounded] = boundPendingCalls([withExtras]);
  t.same(bounded, call(1));
  t.same(Object.keys(bounded ?? {}).sort(), Object.keys(call(1)).sort());
  t.not(bounded, withExtras, 'a fresh object, not the source one');
});

t.test('the default source reports nothing', async (t) => {
  t.same(noPendingCalls('exe_1'), []);
});
