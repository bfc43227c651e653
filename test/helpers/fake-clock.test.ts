import t from 'tap';
import { fakeClock } from './fake-clock.js';

t.test('a fake clock fires timers exactly at their deadline', async (t) => {
  const clock = fakeClock();
  const fired: number[] = [];
  clock.setTimeout(() => fired.push(clock.now()), 1000);
  const cancelled = clock.setTimeout(() => fired.push(-1), 500);
  cancelled.cancel();
  clock.advance(999);
  t.same(fired, []);
  clock.advance(1);
  t.same(fired, [1000]);
});

t.test('an early fake clock fires long timers before their deadline, short ones on time', async (t) => {
  const clock = fakeClock({ earlyMs: 5 });
  const fired: number[] = [];
  clock.setTimeout(() => fired.push(clock.now()), 1000);
  clock.setTimeout(() => fired.push(clock.now()), 3);
  clock.advance(994);
  t.same(fired, [3]);
  clock.advance(1);
  t.same(fired, [3, 995]);
});
