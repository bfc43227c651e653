import t from 'tap';
import { type CommandSlot, CommandSlots } from '../../../core/sandbox/command-slots.js';

/** A promise's outcome so far, without waiting for it. */
function watch<T>(promise: Promise<T>): {
  settled: () => 'pending' | 'resolved' | 'rejected';
  promise: Promise<T>;
} {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  return { settled: () => state, promise };
}

/** Lets every promise reaction queued so far run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function never(): AbortSignal {
  return new AbortController().signal;
}

t.test('the slot count is a positive integer', async (t) => {
  for (const size of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(() => new CommandSlots(size), RangeError, String(size));
  }
  t.doesNotThrow(() => new CommandSlots(1));
});

t.test('slots go to the commands in the order they asked, each as one frees', async (t) => {
  const slots = new CommandSlots(2);
  t.teardown(() => slots.close());
  const first = await slots.acquire(never());
  const second = await slots.acquire(never());
  t.equal(slots.running, 2);
  t.not(first.scanner, second.scanner, 'each slot keeps a scan thread of its own');
  const waiting = [0, 1, 2].map(() => watch(slots.acquire(never())));
  await flush();
  t.same(
    waiting.map((w) => w.settled()),
    ['pending', 'pending', 'pending'],
    'the third waits, and those after it',
  );

  second.release();
  const third = await waiting[0]!.promise;
  t.equal(third.scanner, second.scanner, 'the freed slot, with its thread, goes to the first waiting');
  await flush();
  t.same(
    waiting.map((w) => w.settled()),
    ['resolved', 'pending', 'pending'],
  );
  t.equal(slots.running, 2);

  first.release();
  const fourth = await waiting[1]!.promise;
  t.equal(fourth.scanner, first.scanner);
  third.release();
  const fifth = await waiting[2]!.promise;
  t.equal(fifth.scanner, second.scanner);
  fourth.release();
  fifth.release();
  t.equal(slots.running, 0);
});

t.test('a command whose signal aborts while it waits gives up its place in the queue', async (t) => {
  const slots = new CommandSlots(1);
  t.teardown(() => slots.close());
  const held = await slots.acquire(never());
  const controller = new AbortController();
  const aborted = slots.acquire(controller.signal);
  const after = watch(slots.acquire(never()));
  controller.abort('timeout');
  t.equal(await aborted.catch((reason: unknown) => reason), 'timeout', 'rejects with the reason');
  t.equal(slots.running, 1);
  held.release();
  const next = await after.promise;
  t.equal(next.scanner, held.scanner, 'the slot skips the one that left');
  next.release();
  t.equal(slots.running, 0);

  const gone = new AbortController();
  gone.abort('abort');
  t.equal(
    await slots.acquire(gone.signal).catch((reason: unknown) => reason),
    'abort',
    'an aborted signal is refused at once',
  );
  t.equal(slots.running, 0, 'even with a slot free');
});

t.test('a slot released twice frees once', async (t) => {
  const slots = new CommandSlots(1);
  t.teardown(() => slots.close());
  const slot: CommandSlot = await slots.acquire(never());
  const waiting = [watch(slots.acquire(never())), watch(slots.acquire(never()))];
  slot.release();
  slot.release();
  await flush();
  t.same(
    waiting.map((w) => w.settled()),
    ['resolved', 'pending'],
    'the second release grants nobody',
  );
  t.equal(slots.running, 1);
  (await waiting[0]!.promise).release();
  (await waiting[1]!.promise).release();
  t.equal(slots.running, 0, 'the count never goes below what is held');
});
