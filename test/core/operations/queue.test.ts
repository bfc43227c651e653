import t from 'tap';
import { Queue } from '../../../core/operations/queue.js';

t.test('first in, first out, through compactions', async (t) => {
  const queue = new Queue<number>();
  t.equal(queue.shift(), undefined, 'empty');
  for (let i = 0; i < 5_000; i++) queue.push(i);
  const shifted = Array.from({ length: 4_000 }, () => queue.shift());
  t.same(
    shifted,
    Array.from({ length: 4_000 }, (_, i) => i),
  );
  t.equal(queue.length, 1_000);
  t.equal(queue.peek(), 4_000);
  queue.push(5_000);
  const rest: number[] = [];
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) rest.push(item);
  t.same(
    rest,
    Array.from({ length: 1_001 }, (_, i) => 4_000 + i),
  );
  t.equal(queue.length, 0);
});

t.test('retain keeps the accepted items in their order', async (t) => {
  const queue = new Queue<number>();
  for (let i = 0; i < 10; i++) queue.push(i);
  queue.shift();
  queue.retain((item) => item % 3 === 0);
  t.equal(queue.length, 3);
  t.same([queue.shift(), queue.shift(), queue.shift(), queue.shift()], [3, 6, 9, undefined]);
});
