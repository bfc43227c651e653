import t from 'tap';
import { BUILTIN_LIMITS } from '../../../core/agent/builtin-limits.js';
import { PROFILE_LIMITS, PROVIDER_LIMITS } from '../../../core/limits.js';
import { readModelCall } from '../../../core/turns/model-call.js';

const call = (overrides = {}) => ({ id: 'call_1', name: 'f', arguments: '{"a":1}', ...overrides });

t.test('a call within every bound is read', async (t) => {
  t.same(readModelCall(new Set(), call()), { arguments: { a: 1 } });
});

t.test('a call past the calls its round runs is too many, before anything else is looked at', async (t) => {
  t.equal(readModelCall(new Set(['call_1']), call({ exceeds: 'round_calls' })), 'too_many_calls');
});

t.test(
  'a call whose arguments the adapter did not keep is invalid_arguments, as an over-long one',
  async (t) => {
    t.equal(readModelCall(new Set(), call({ arguments: '{}', exceeds: 'arguments' })), 'invalid_arguments');
    const long = JSON.stringify({ a: 'x'.repeat(PROFILE_LIMITS.argument_bytes) });
    t.equal(readModelCall(new Set(), call({ arguments: long })), 'invalid_arguments');
    t.same(readModelCall(new Set(), call({ arguments: long }), BUILTIN_LIMITS.argument_bytes), {
      arguments: JSON.parse(long),
    });
  },
);

t.test('the id is checked before the arguments', async (t) => {
  t.equal(readModelCall(new Set(['call_1']), call({ exceeds: 'arguments' })), 'invalid_call_id');
  t.equal(readModelCall(new Set(), call({ id: '' })), 'invalid_call_id');
});

t.test("the adapter keeps a call's arguments up to the largest bound any tool has", async (t) => {
  t.equal(PROVIDER_LIMITS.call_argument_bytes, BUILTIN_LIMITS.argument_bytes);
  t.ok(PROVIDER_LIMITS.call_argument_bytes >= PROFILE_LIMITS.argument_bytes);
  t.ok(PROVIDER_LIMITS.round_argument_bytes >= PROVIDER_LIMITS.call_argument_bytes);
});
