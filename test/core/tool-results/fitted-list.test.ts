import t from 'tap';
import { fittingPrefix } from '../../../core/tool-results/fitted-list.js';

t.test('the longest beginning whose JSON array fits, by its encoded size', async (t) => {
  const items = ['a"', 'b', 'c'];
  const whole = Buffer.byteLength(JSON.stringify(items));
  t.same(fittingPrefix(items, whole), items, 'exactly at the bound');
  t.same(fittingPrefix(items, whole - 1), ['a"', 'b'], 'one byte short');
  t.same(fittingPrefix(items, Buffer.byteLength('["a\\""]')), ['a"'], 'an escape counts its bytes');
  t.same(fittingPrefix(items, Buffer.byteLength('["a\\""]') - 1), []);
  t.same(fittingPrefix(['é'], 5), [], 'UTF-8 bytes, not characters');
  t.same(fittingPrefix(['é'], 6), ['é']);
  t.same(fittingPrefix([], 2), []);
});
