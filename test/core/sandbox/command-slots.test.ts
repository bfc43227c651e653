import t from 'tap';
import { type CommandSlot, CommandSlots } from '../../../core/sandbox/command-slots.js';

/** Lets every promise reaction queued so far run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function never(): AbortSignal {
  return new AbortController().signal;
}

/** Slots and the grants they made, in order, each named by who asked. */
function recorded(size: number) {
  const slots = new CommandSlots(size);
  const granted: string[] = [];
  const held = new Map<string, CommandSlot>();
  const ask = (session: string, name: string, signal = never()) =>
    slots.acquire(session, signal).then((slot) => {
      granted.push(name);
      held.set(name, slot);
      return slot;
    });
  const release = async (name: string) => {
    held.get(name)!.release();
    await flush();
  };
  return { slots, granted, ask, release };
}

t.test('the slot count is a positive integer', async (t) => {
  for (const size of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(() => new CommandSlots(size), RangeError, String(size));
  }
  t.doesNotThrow(() => new CommandSlots(1));
});

t.test('a session holds at most half of the slots, alone or not', async (t) => {
  const { slots, granted, ask, release } = recorded(4);
  for (const name of ['a1', 'a2', 'a3', 'a4']) void ask('A', name);
  await flush();
  t.same(granted, ['a1', 'a2'], 'two of four, though two are free');
  t.same([slots.inUse, slots.waiting, slots.waitingSessions], [2, 2, 1]);

  void ask('B', 'b1');
  void ask('B', 'b2');
  await flush();
  t.same(granted, ['a1', 'a2', 'b1', 'b2'], "another session's commands take the other half at once");
  t.same([slots.inUse, slots.waiting, slots.waitingSessions], [4, 2, 1]);

  await release('b1');
  t.same(granted, ['a1', 'a2', 'b1', 'b2'], "a slot B gives back is not A's: A holds its half");
  t.equal(slots.inUse, 3);
  await release('a1');
  t.same(granted.slice(4), ['a3'], 'A takes back a slot of its own half');
  t.same([slots.inUse, slots.waiting, slots.waitingSessions], [3, 1, 1], 'one slot idles: A has its half');
});

t.test('an odd count is shared rounded up, and one slot goes to one session at a time', async (t) => {
  const three = recorded(3);
  for (const name of ['a1', 'a2', 'a3']) void three.ask('A', name);
  await flush();
  t.same(three.granted, ['a1', 'a2']);
  const one = recorded(1);
  void one.ask('A', 'a1');
  void one.ask('B', 'b1');
  void one.ask('A', 'a2');
  await flush();
  t.same(one.granted, ['a1']);
  await one.release('a1');
  t.same(one.granted, ['a1', 'b1'], 'the other session next, though A asked again meanwhile');
  await one.release('b1');
  t.same(one.granted, ['a1', 'b1', 'a2']);
});

t.test('free slots go round the waiting sessions, least recently served first', async (t) => {
  const { granted, ask, release } = recorded(2);
  for (const [session, name] of [
    ['A', 'a1'],
    ['A', 'a2'],
    ['A', 'a3'],
    ['B', 'b1'],
    ['B', 'b2'],
    ['C', 'c1'],
    ['C', 'c2'],
  ] as const) {
    void ask(session, name);
  }
  await flush();
  t.same(granted, ['a1', 'b1'], 'one each: half of two');
  await release('a1');
  t.same(granted.slice(2), ['c1'], 'C has not been served yet');
  await release('b1');
  t.same(granted.slice(3), ['a2'], 'A was served before B');
  await release('c1');
  t.same(granted.slice(4), ['b2']);
  await release('a2');
  t.same(granted.slice(5), ['c2']);
  await release('b2');
  t.same(granted.slice(6), ['a3'], "each session's commands in the order they asked");
});

t.test('a command whose signal aborts while it waits gives up its place in the queue', async (t) => {
  const { slots, granted, ask, release } = recorded(1);
  void ask('A', 'a1');
  const controller = new AbortController();
  const aborted = slots.acquire('B', controller.signal);
  void ask('C', 'c1');
  await flush();
  t.same([slots.waiting, slots.waitingSessions], [2, 2]);
  controller.abort('timeout');
  t.equal(await aborted.catch((reason: unknown) => reason), 'timeout', 'rejects with the reason');
  t.same([slots.waiting, slots.waitingSessions], [1, 1], 'the session has left the queue');
  await release('a1');
  t.same(granted, ['a1', 'c1'], 'the slot skips the one that left');

  const gone = new AbortController();
  gone.abort('abort');
  t.equal(
    await slots.acquire('D', gone.signal).catch((reason: unknown) => reason),
    'abort',
    'an aborted signal is refused at once',
  );
  t.equal(slots.waiting, 0);
});

t.test('a slot released twice frees once', async (t) => {
  const { slots, granted, ask } = recorded(1);
  const slot = await ask('A', 'a1');
  void ask('B', 'b1');
  void ask('C', 'c1');
  slot.release();
  slot.release();
  await flush();
  t.same(granted, ['a1', 'b1'], 'the second release grants nobody');
  t.equal(slots.inUse, 1, 'the count never goes below what is held');
});
