import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { systemClock } from '../../../core/clock.js';
import { WORKSPACE_TOOL_LIMITS } from '../../../core/workspace/workspace-tool-limits.js';
import type { WorkspaceToolOutcome } from '../../../core/workspace/workspace-tool-request.js';
import { WorkspaceTools, type WorkspaceToolsOptions } from '../../../core/workspace/workspace-tools.js';
import { pinnedWorkspace } from '../../helpers/confined.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { mountSlowFilesystem, slowFilesystemUnavailable } from '../../process/slow-filesystem.js';
import { INSIDE, refused, type Sandbox, sandbox } from './workspace-fixture.js';

/**
 * A search that keeps its thread busy for longer than any test runs: RE2 is linear in the text, but the
 * automaton for a thousand-fold repetition takes a new state at almost every byte of a random text, each
 * costing work in proportion to the pattern's size (over ten seconds for this megabyte on this machine).
 */
const SLOW_SEARCH = { pattern: 'a[ab]{999}c' };

function slowText(): string {
  let seed = 7;
  const letters: string[] = ['c'];
  for (let i = 1; i < WORKSPACE_TOOL_LIMITS.search_file_bytes_max; i += 1) {
    seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
    letters.push(seed & 0x10000 ? 'a' : 'b');
  }
  return letters.join('');
}

const SLOW_TEXT = slowText();

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

function slowWorkspace(s: Sandbox): void {
  mkdirSync(join(s.ws, 'slow'));
  writeFileSync(join(s.ws, 'slow', 'slow.txt'), SLOW_TEXT);
  writeFileSync(join(s.ws, 'f.txt'), INSIDE);
}

const SLOW = { ...SLOW_SEARCH, path: 'slow' };

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
  slowWorkspace(s);
  const clock = fakeClock();
  const pool = tools(t, { clock, deadlineMs: 1_000, threads: 1 });
  const hung = track(pool.run(s.request('search_files', SLOW), never, 'A'));
  const queued = track(pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A'));
  clock.advance(999);
  t.equal(await answeredAtOnce(hung), null, 'not before the deadline');
  clock.advance(1);
  t.equal(pool.abandoned, 1, 'its thread is abandoned');
  refused(t, (await answeredAtOnce(hung))!, 'timed_out', 'at the deadline');
  refused(t, (await answeredAtOnce(queued))!, 'timed_out', 'a queued call counts its queue time');

  const after = await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A');
  t.ok(after.ok && after.output.includes('inside content'), 'a new thread serves the next call');
  await until(() => pool.abandoned === 0, 'the abandoned thread to be stopped');
  t.equal(pool.abandoned, 0, 'a thread busy in JavaScript is stopped');
});

t.test('calls waiting for a thread start when one is free, in order', async (t) => {
  const s = sandbox(t);
  slowWorkspace(s);
  const pool = tools(t, { clock: fakeClock(), threads: 1 });
  const order: string[] = [];
  const calls = ['one', 'two', 'three'].map((label) =>
    pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A').then((outcome) => {
      order.push(label);
      return outcome;
    }),
  );
  const outcomes = await Promise.all(calls);
  t.ok(outcomes.every((outcome) => outcome.ok));
  t.same(order, ['one', 'two', 'three'], 'first in, first out');
});

t.test('sessions waiting are served in turn, each session’s own calls in order', async (t) => {
  const s = sandbox(t);
  slowWorkspace(s);
  const pool = tools(t, { clock: fakeClock(), threads: 1 });
  const order: string[] = [];
  const calls = ['A1', 'A2', 'A3', 'B1', 'B2', 'C1'].map((label) =>
    pool.run(s.request('read_file', { path: 'f.txt' }), never, label[0]!).then((outcome) => {
      order.push(label);
      return outcome;
    }),
  );
  t.ok((await Promise.all(calls)).every((outcome) => outcome.ok));
  t.same(order, ['A1', 'B1', 'C1', 'A2', 'B2', 'A3'], 'round-robin across the sessions waiting');
});

t.test(
  'six slow calls of one session hold one thread; another session’s read is answered meanwhile',
  async (t) => {
    const s = sandbox(t);
    slowWorkspace(s);
    const pool = tools(t, { clock: systemClock });
    const abort = new AbortController();
    const slow = Array.from({ length: 6 }, () =>
      track(pool.run(s.request('search_files', SLOW), abort.signal, 'ses_busy')),
    );
    const other = await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'ses_other');
    t.ok(other.ok && other.output.includes('inside content'), 'the other session is not queued behind them');
    t.same(
      slow.map((call) => call.outcome),
      [null, null, null, null, null, null],
      'it was answered before any of the slow calls',
    );
    abort.abort();
    for (const call of slow) refused(t, (await answeredAtOnce(call))!, 'cancelled', 'each slow call');
    t.equal(pool.abandoned, 1, 'only one of them was on a thread: the rest waited behind it');
  },
);

t.test('a call waiting behind its own session’s counts its wait against its deadline', async (t) => {
  const s = sandbox(t);
  slowWorkspace(s);
  const clock = fakeClock();
  const pool = tools(t, { clock, deadlineMs: 1_000 });
  const slow = track(pool.run(s.request('search_files', SLOW), never, 'ses_busy'));
  const waiting = track(pool.run(s.request('read_file', { path: 'f.txt' }), never, 'ses_busy'));
  const other = await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'ses_other');
  t.ok(other.ok, 'threads are free for other sessions');
  t.equal(waiting.outcome, null, 'yet the session’s second call waits for its first');
  clock.advance(1_000);
  refused(t, (await answeredAtOnce(slow))!, 'timed_out', 'the slow call at its deadline');
  refused(t, (await answeredAtOnce(waiting))!, 'timed_out', 'the waiting call at its own');
  const after = await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'ses_busy');
  t.ok(after.ok, 'the session’s next call runs');
});

t.test('aborting answers cancelled at once, queued or running; the other calls keep running', async (t) => {
  const s = sandbox(t);
  slowWorkspace(s);
  const pool = tools(t, { clock: systemClock, threads: 2 });
  const aborted = new AbortController();
  aborted.abort();
  refused(
    t,
    await pool.run(s.request('read_file', { path: 'f.txt' }), aborted.signal, 'A'),
    'cancelled',
    'already',
  );

  const first = new AbortController();
  const second = new AbortController();
  const hung = track(pool.run(s.request('search_files', SLOW), first.signal, 'A'));
  const other = track(pool.run(s.request('search_files', SLOW), second.signal, 'B'));
  const queuedAbort = new AbortController();
  const queued = track(pool.run(s.request('read_file', { path: 'f.txt' }), queuedAbort.signal, 'C'));
  queuedAbort.abort();
  refused(t, (await answeredAtOnce(queued))!, 'cancelled', 'queued');
  first.abort();
  refused(t, (await answeredAtOnce(hung))!, 'cancelled', 'running');
  t.equal(other.outcome, null, 'the other running call is not disturbed');
  const meanwhile = await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A');
  t.ok(meanwhile.ok, 'a new call runs on a new thread meanwhile');
  second.abort();
  refused(t, (await answeredAtOnce(other))!, 'cancelled', 'the other');
});

t.test('with abandonedMax threads still abandoned, calls answer unavailable at once', async (t) => {
  const s = sandbox(t);
  slowWorkspace(s);
  const pool = tools(t, { clock: systemClock, threads: 2, abandonedMax: 1 });
  const abort = new AbortController();
  const hung = pool.run(s.request('search_files', SLOW), abort.signal, 'A');
  abort.abort();
  refused(t, await hung, 'cancelled', 'abandoned');
  // The abandoned thread has not reported its exit yet: nothing has run since the abort.
  refused(
    t,
    await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A'),
    'unavailable',
    'at the bound',
  );
  await until(() => pool.abandoned === 0, 'the abandoned thread to exit');
  t.ok(
    (await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A')).ok,
    'once it exited, calls run again',
  );
});

t.test('invalid arguments are answered without a thread', async (t) => {
  const s = sandbox(t);
  const pool = tools(t, { clock: fakeClock(), threads: 1 });
  const outcome = await pool.run(s.request('read_file', { path: 'f.txt', bogus: true }), never, 'A');
  refused(t, outcome, 'invalid_arguments', 'unknown member');
});

t.test('close waits for work in progress, then refuses new calls', async (t) => {
  const s = sandbox(t);
  slowWorkspace(s);
  const pool = new WorkspaceTools({ clock: systemClock, threads: 1 });
  const reading = pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A');
  const waiting = pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A');
  const closing = pool.close(10_000);
  refused(t, await waiting, 'unavailable', 'a queued call is refused');
  t.ok((await reading).ok, 'the running call is answered');
  t.equal(await closing, true, 'nothing was left blocked');
  refused(
    t,
    await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A'),
    'unavailable',
    'after close',
  );

  const busy = new WorkspaceTools({ clock: systemClock, threads: 1 });
  const hung = busy.run(s.request('search_files', SLOW), never, 'A');
  t.equal(await busy.close(50), false, 'a call still working after the grace is left blocked');
  refused(t, await hung, 'unavailable', 'and answered');
});

const slowUnavailable = slowFilesystemUnavailable();

t.test(
  'a read hung on the filesystem stalls only its own session, and aborting it answers at once',
  { skip: slowUnavailable ?? false },
  async (t) => {
    const s = sandbox(t);
    slowWorkspace(s);
    const slow = await mountSlowFilesystem(t, [
      { name: 'stuck.txt', content: 'never read\n', never: true },
      { name: 'slow.txt', content: 'read once released\n' },
    ]);
    const pool = tools(t, { clock: systemClock, threads: 2, abandonedMax: 1 });
    const abort = new AbortController();
    const stuck = track(
      pool.run(
        { ...s.request('read_file', { path: 'stuck.txt' }), workspace: pinnedWorkspace(slow.root) },
        abort.signal,
        'A',
      ),
    );
    t.equal(await slow.waitForRead(), 'stuck.txt', 'the read is held in the kernel');

    const plain = await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'B');
    t.ok(plain.ok && plain.output.includes('inside content'), 'another read completes meanwhile');
    const released = pool.run(
      { ...s.request('read_file', { path: 'slow.txt' }), workspace: pinnedWorkspace(slow.root) },
      never,
      'C',
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
      await pool.run(s.request('read_file', { path: 'f.txt' }), never, 'A'),
      'unavailable',
      'abandonedMax',
    );
    t.equal(await pool.close(100), false, 'close reports the blocked thread');

    await slow.close();
    await until(() => pool.abandoned === 0, 'the thread to exit once its read fails');
    t.equal(pool.abandoned, 0, 'the thread exits once the filesystem answers');
  },
);
