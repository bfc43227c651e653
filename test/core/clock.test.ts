import t from 'tap';
import { deadlineAt } from '../../core/clock.js';
import { fakeClock } from '../helpers/fake-clock.js';

t.test('a deadline acts only once the clock has reached it, however early its timers fire', async (t) => {
  const clock = fakeClock({ earlyMs: 5 });
  const reached: number[] = [];
  deadlineAt(clock, 1000, () => reached.push(clock.now()));
  clock.advance(999);
  t.same(reached, []);
  clock.advance(1);
  t.same(reached, [1000]);
  const cancelled = deadlineAt(clock, 2000, () => reached.push(-1));
  clock.advance(997);
  cancelled.cancel();
  clock.advance(10);
  t.same(reached, [1000]);
});
