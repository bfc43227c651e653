import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { systemClock } from '../../../core/clock.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import type { WorkspaceToolOutcome } from '../../../core/workspace/workspace-tool-request.js';
import { WorkspaceTools, type WorkspaceToolsOptions } from '../../../core/workspace/workspace-tools.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { mountSlowFilesystem, slowFilesystemUnavailable } from '../../process/slow-filesystem.js';
import { INSIDE, refused, type Sandbox, sandbox } from './workspace-fixture.js';

/** A search whose expression backtracks for longer than any test runs: its thread stays busy until stopped. */
const HANGING_SEARCH = { pattern: '^(a+)+$' };
const HANGING_LINE = `${'a'.repeat(48)}!\n`;

function tools(t: Test, options: WorkspaceToolsOptions): WorkspaceTools {
  const pool = new WorkspaceTools(options);
  t.teardown(() => pool.close(5_000));
  return pool;
}

/** Tracks whether a call has been answered, without waiting for it. */
function track(promise: Promise<WorkspaceToolOutcome>) {
  const tracked: { outcome: WorkspaceToolOutcome | null; promise: typeof promise } = {
    outcome: null,
    promise,
  };
  void promise.then((outcome) => {
    tracked.outcome = outcome;
  });
  return tracked;
}

/** Answered before the event loop's next turn: nothing was waited for. */
async function answeredAtOnce(tracked: ReturnType<typeof track>): Promise<WorkspaceToolOutcome | null> {
  await nextTurn();
  return tracked.outcome;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 15_000) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

function hangingWorkspace(s: Sandbox): void {
  writeFileSync(join(s.ws, 'hang.txt'), HANGING_LINE);
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
}

const never = new AbortController().signal;

t.test('the defaults are the named limits', async (t) => {
  t.equal(WORKSPACE_TOOL_LIMITS.deadline_ms_default, 30_000);
  t.equal(WORKSPACE_TOOL_LIMITS.threads_default, 4);
  t.equal(WORKSPACE_TOOL_LIMITS.abandoned_max_default, 8);
  t.throws(() => new WorkspaceTools({ clock: systemClock, threads: 0 }), RangeError);
  t.throws(() => new WorkspaceTools({ clock: systemClock, deadlineMs: 1.5 }), RangeError);
});

t.test('a call past its deadline answers timed_out; its thread is abandoned and others go on', async (t) => {
  const s = sandbox(t);
  hangingWorkspace(s);
  const clock = fakeClock();
  const pool = tools(t, { clock, deadlineMs: 1_000, threads: 1 });
  const hung = track(pool.run(s.request('search_files', HANGING_SEARCH), never));
  const queued = track(pool.run(s.request('read_file', { path: 'f.txt' }), never));
  clock.advance(999);
  t.equal(await answeredAtOnce(hung), null, 'not before the deadline');
  clock.advance(1);
  t.equal(pool.abandoned, 1, 'its thread is abandoned');
  refused(t, (await answeredAtOnce(hung))!, 'timed_out', 'at the deadline');
  refused(t, (await answeredAtOnce(queued))!, 'timed_out', 'a queued call counts its queue time');

  const after = await pool.run(s.request('read_file', { path: 'f.txt' }), never);
  t.ok(after.ok && after.output.includes('inside content'), 'a new thread serves the next call');
  await until(() => pool.abandoned === 0, 'the abandoned thread to be stopped');
  t.equal(pool.abandoned, 0, 'a thread busy in JavaScript is stopped');
});

t.test('calls waiting for a thread start when one is free, in order', async (t) => {
  const s = sandbox(t);
  hangingWorkspace(s);
  const pool = tools(t, { clock: fakeClock(), threads: 1 });
  const order: string[] = [];
  const calls = ['one', 'two', 'three'].map((label) =>
    pool.run(s.request('read_file', { path: 'f.txt' }), never).then((outcome) => {
      order.push(label);
      return outcome;
    }),
  );
  const outcomes = await Promise.all(calls);
  t.ok(outcomes.every((outcome) => outcome.ok));
  t.same(order, ['one', 'two', 'three'], 'first in, first out');
});

t.test('aborting answers cancelled at once, queued or running; the other calls keep running', async (t) => {
  const s = sandbox(t);
  hangingWorkspace(s);
  const pool = tools(t, { clock: systemClock, threads: 2 });
  const aborted = new AbortController();
  aborted.abort();
  refused(
    t,
    await pool.run(s.request('read_file', { path: 'f.txt' }), aborted.signal),
    'cancelled',
    'already',
  );

  const first = new AbortController();
  const second = new AbortController();
  const hung = track(pool.run(s.request('search_files', HANGING_SEARCH), first.signal));
  const other = track(pool.run(s.request('search_files', HANGING_SEARCH), second.signal));
  const queuedAbort = new AbortController();
  const queued = track(pool.run(s.request('read_file', { path: 'f.txt' }), queuedAbort.signal));
  queuedAbort.abort();
  refused(t, (await answeredAtOnce(queued))!, 'cancelled', 'queued');
  first.abort();
  refused(t, (await answeredAtOnce(hung))!, 'cancelled', 'running');
  t.equal(other.outcome, null, 'the other running call is not disturbed');
  const meanwhile = await pool.run(s.request('read_file', { path: 'f.txt' }), never);
  t.ok(meanwhile.ok, 'a new call runs on a new thread meanwhile');
  second.abort();
  refused(t, (await answeredAtOnce(other))!, 'cancelled', 'the other');
});

t.test('with abandonedMax threads still abandoned, calls answer unavailable at once', async (t) => {
  const s = sandbox(t);
  hangingWorkspace(s);
  const pool = tools(t, { clock: systemClock, threads: 2, abandonedMax: 1 });
  const abort = new AbortController();
  const hung = pool.run(s.request('search_files', HANGING_SEARCH), abort.signal);
  abort.abort();
  refused(t, await hung, 'cancelled', 'abandoned');
  // The abandoned thread has not reported its exit yet: nothing has run since the abort.
  refused(t, await pool.run(s.request('read_file', { path: 'f.txt' }), never), 'unavailable', 'at the bound');
  await until(() => pool.abandoned === 0, 'the abandoned thread to exit');
  t.ok(
    (await pool.run(s.request('read_file', { path: 'f.txt' }), never)).ok,
    'once it exited, calls run again',
  );
});

t.test('invalid arguments are answered without a thread', async (t) => {
  const s = sandbox(t);
  const pool = tools(t, { clock: fakeClock(), threads: 1 });
  const outcome = await pool.run(s.request('read_file', { path: 'f.txt', bogus: true }), never);
  refused(t, outcome, 'invalid_arguments', 'unknown member');
});

t.test('close waits for work in progress, then refuses new calls', async (t) => {
  const s = sandbox(t);
  hangingWorkspace(s);
  const pool = new WorkspaceTools({ clock: systemClock, threads: 1 });
  const reading = pool.run(s.request('read_file', { path: 'f.txt' }), never);
  const waiting = pool.run(s.request('read_file', { path: 'f.txt' }), never);
  const closing = pool.close(10_000);
  refused(t, await waiting, 'unavailable', 'a queued call is refused');
  t.ok((await reading).ok, 'the running call is answered');
  t.equal(await closing, true, 'nothing was left blocked');
  refused(t, await pool.run(s.request('read_file', { path: 'f.txt' }), never), 'unavailable', 'after close');

  const busy = new WorkspaceTools({ clock: systemClock, threads: 1 });
  const hung = busy.run(s.request('search_files', HANGING_SEARCH), never);
  t.equal(await busy.close(50), false, 'a call still working after the grace is left blocked');
  refused(t, await hung, 'unavailable', 'and answered');
});

const slowUnavailable = slowFilesystemUnavailable();

t.test(
  'a read hung on the filesystem stalls only itself, and aborting it answers at once',
  { skip: slowUnavailable ?? false },
  async (t) => {
    const s = sandbox(t);
    hangingWorkspace(s);
    const slow = await mountSlowFilesystem(t, [
      { name: 'stuck.txt', content: 'never read\n', never: true },
      { name: 'slow.txt', content: 'read once released\n' },
    ]);
    const pool = tools(t, { clock: systemClock, threads: 2, abandonedMax: 1 });
    const abort = new AbortController();
    const stuck = track(
      pool.run({ ...s.request('read_file', { path: 'stuck.txt' }), workspace: slow.root }, abort.signal),
    );
    t.equal(await slow.waitForRead(), 'stuck.txt', 'the read is held in the kernel');

    const plain = await pool.run(s.request('read_file', { path: 'f.txt' }), never);
    t.ok(plain.ok && plain.output.includes('inside content'), 'another read completes meanwhile');
    const released = pool.run(
      { ...s.request('read_file', { path: 'slow.txt' }), workspace: slow.root },
      never,
    );
    t.equal(await slow.waitForRead(), 'slow.txt');
    await slow.release();
    const answer = await released;
    t.ok(
      answer.ok && answer.output.includes('read once released'),
      'another read of the same filesystem too',
    );
    t.equal(stuck.outcome, null, 'the hung read is still waiting');

    abort.abort();
    refused(t, (await answeredAtOnce(stuck))!, 'cancelled', 'aborting answers at once');
    t.equal(pool.abandoned, 1, 'its thread stays blocked in the kernel');
    await sleep(100);
    t.equal(pool.abandoned, 1, 'terminating it cannot stop it');
    refused(
      t,
      await pool.run(s.request('read_file', { path: 'f.txt' }), never),
      'unavailable',
      'abandonedMax',
    );
    t.equal(await pool.close(100), false, 'close reports the blocked thread');

    await slow.close();
    await until(() => pool.abandoned === 0, 'the thread to exit once its read fails');
    t.equal(pool.abandoned, 0, 'the thread exits once the filesystem answers');
  },
);
