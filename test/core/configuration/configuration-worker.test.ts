import t from 'tap';
import { ConfigurationWorker } from '../../../core/configuration/configuration-worker.js';

t.test('holders take the worker one at a time, in arrival order', async (t) => {
  const worker = new ConfigurationWorker();
  t.equal(worker.busy, false);
  const order: string[] = [];
  const first = await worker.acquire();
  t.equal(worker.busy, true);
  const second = worker.acquire().then((release) => {
    order.push('second');
    return release;
  });
  const third = worker.acquire().then((release) => {
    order.push('third');
    return release;
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.same(order, [], 'nobody enters while the first holds the worker');
  first();
  first();
  const releaseSecond = await second;
  await new Promise((resolve) => setImmediate(resolve));
  t.same(order, ['second'], 'a repeated release lets only one waiter in');
  releaseSecond();
  (await third)();
  t.same(order, ['second', 'third']);
  t.equal(worker.busy, false);
});
