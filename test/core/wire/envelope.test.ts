import t from 'tap';
import {
  checkEnvelope,
  decodeLine,
  envelopeFits,
  type RequestEnvelope,
} from '../../../core/wire/envelope.js';

const valid = {
  type: 'request',
  id: 'r-1',
  method: 'session.create',
  session_id: null,
  control_token: null,
  operation_id: 'op-1',
  payload: {},
};

t.test('decodeLine notes only safe ids', async (t) => {
  t.same(decodeLine(Buffer.from('{"id":"a.b:c-d_1"}')), {
    kind: 'object',
    value: { id: 'a.b:c-d_1' },
    safeId: 'a.b:c-d_1',
  });
  t.match(decodeLine(Buffer.from('{"id":"has space"}')), { kind: 'object', safeId: null });
  t.match(decodeLine(Buffer.from(`{"id":"${'x'.repeat(129)}"}`)), { safeId: null });
  t.match(decodeLine(Buffer.from('{"id":7}')), { safeId: null });
  t.same(decodeLine(Buffer.from('[]')), { kind: 'invalid' });
  t.same(decodeLine(Buffer.from([0x7b, 0xff, 0x7d])), { kind: 'invalid' }, 'invalid UTF-8');
});

t.test('decodeLine reads only the id of an object nested past 64 levels', async (t) => {
  const line = (depth: number, id = 'deep') =>
    Buffer.from(`{"id":"${id}","payload":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`);
  t.match(decodeLine(line(64)), { kind: 'object', safeId: 'deep' }, 'the envelope and 63 more levels');
  t.same(decodeLine(line(65)), { kind: 'too_deep', safeId: 'deep' });
  t.same(decodeLine(line(5_000, 'has space')), { kind: 'too_deep', safeId: null });
});

t.test('checkEnvelope accepts exactly the seven members', async (t) => {
  t.same(checkEnvelope({ ...valid }), valid);
  t.equal(checkEnvelope({ ...valid, extra: 1 }), 'invalid_request');
  const { payload: _p, ...six } = valid;
  t.equal(checkEnvelope(six), 'invalid_request');
  t.equal(checkEnvelope({ ...valid, type: 'event' }), 'invalid_request');
  t.equal(checkEnvelope({ ...valid, method: 'Bad Method' }), 'invalid_request');
  t.equal(checkEnvelope({ ...valid, control_token: 5 }), 'invalid_request');
  t.equal(checkEnvelope({ ...valid, payload: null }), 'invalid_request');
});

t.test('the payload limit is 32,768 bytes encoded compactly', async (t) => {
  const at = (n: number) => ({ ...valid, payload: { p: 'x'.repeat(n - 8) } });
  t.equal(JSON.stringify(at(32_768).payload).length, 32_768);
  t.same(typeof checkEnvelope(at(32_768)), 'object');
  t.equal(checkEnvelope(at(32_769)), 'limit_exceeded');
  const multibyte = { ...valid, payload: { p: 'é'.repeat(16_381) } };
  t.equal(checkEnvelope(multibyte), 'limit_exceeded', 'bytes, not characters');
});

t.test('envelopeFits applies each member rule', async (t) => {
  const envelope = valid as RequestEnvelope;
  t.ok(envelopeFits(envelope, { session: 'null', control: 'null', operation: 'required' }));
  t.notOk(envelopeFits(envelope, { session: 'null', control: 'null', operation: 'null' }));
  t.notOk(envelopeFits(envelope, { session: 'required', control: 'null', operation: 'required' }));
  t.ok(envelopeFits(envelope, { session: 'optional', control: 'optional', operation: 'optional' }));
});
