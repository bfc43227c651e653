import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Clock } from '../../../core/clock.js';
import { ownFolder } from '../../../core/confinement/confined-workspace.js';
import { type CommandSandbox, SandboxClosed } from '../../../core/sandbox/command-sandbox.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import {
  killOnTeardown,
  neverAborted,
  processesLeft,
  processesWith,
  processStarted,
  rootDirectory,
  sandboxUnavailable,
  testSandbox,
} from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

const NOT_STARTED = {
  exitCode: null,
  signal: null,
  timedOut: false,
  queueTimedOut: false,
  output: '',
  truncated: false,
  stdoutBytes: 0,
  stderrBytes: 0,
};

function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  return { promise, settled: () => settled };
}

/** Lets what the event loop has ready run, so that a settlement that was due would have happened. */
const moment = () => sleep(50);

/** One sandbox on one fake clock for the checks that share them (each command on a marker of its own). */
const clock = fakeClock();
let shared: CommandSandbox | null = null;
async function sandbox(): Promise<CommandSandbox> {
  shared ??= await testSandbox(t, { clock });
  return shared;
}

t.test(
  'a command is killed whole at its time limit on the injected clock, and not before',
  { skip },
  async (t) => {
    killOnTeardown(t, 'sleep 98761', 'sleep 98762');
    const commands = await sandbox();
    const running = tracked(
      commands.run({
        command: 'echo started; sleep 98761 & sleep 98762',
        workspace: ownFolder(await rootDirectory(t)),
        session: 'ses_test',
        timeoutMs: 1_000,
        signal: neverAborted(),
      }),
    );
    await processStarted('sleep 98761');
    await processStarted('sleep 98762');

    clock.advance(999);
    await moment();
    t.notOk(running.settled(), 'still running just before the limit');
    t.ok((await processesWith('sleep 98762')).length > 0, 'the command is alive');

    clock.advance(1);
    t.same(await running.promise, {
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: true,
      queueTimedOut: false,
      cancelled: false,
      output: 'started\n',
      truncated: false,
      stdoutBytes: 8,
      stderrBytes: 0,
    });
    t.same(await processesLeft('sleep 98761'), [], 'the background process is gone');
    t.same(await processesLeft('sleep 98762'), [], 'the foreground process is gone');
    t.equal(commands.running, 0);
  },
);

t.test('an aborted command is killed whole and reported cancelled', { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98763');
  const controller = new AbortController();
  const running = (await sandbox()).run({
    command: 'sleep 98763',
    workspace: ownFolder(await rootDirectory(t)),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: controller.signal,
  });
  await processStarted('sleep 98763');
  controller.abort();
  t.match(await running, { cancelled: true, timedOut: false, signal: 'SIGKILL', exitCode: null });
  t.same(await processesLeft('sleep 98763'), [], 'no process of it is left');
});

t.test('a request aborted before it starts runs nothing', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const controller = new AbortController();
  controller.abort();
  const outcome = await (await sandbox()).run({
    command: `touch '${root}/ran'`,
    workspace: ownFolder(root),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: controller.signal,
  });
  t.same(outcome, { ...NOT_STARTED, timedOut: false, cancelled: true });
  await t.rejects(stat(join(root, 'ran')), { code: 'ENOENT' });
});

t.test('a process left in the background dies with the command that started it', { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98764');
  const outcome = await (await sandbox()).run({
    command: 'sleep 98764 >/dev/null 2>&1 & echo left',
    workspace: ownFolder(await rootDirectory(t)),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
  t.equal(outcome.exitCode, 0);
  t.equal(outcome.output, 'left\n');
  t.same(await processesLeft('sleep 98764'), [], 'the PID namespace took it along');
});

t.test('a command that ends on its own leaves no timer and no abort listener behind', { skip }, async (t) => {
  let armed = 0;
  let cancelled = 0;
  const counting: Clock = {
    now: clock.now,
    wallNow: clock.wallNow,
    setTimeout(fn, ms) {
      armed += 1;
      const timer = clock.setTimeout(fn, ms);
      return {
        cancel() {
          cancelled += 1;
          timer.cancel();
        },
      };
    },
  };
  const signal = new AbortController().signal;
  const listeners = new Set<unknown>();
  type Listening = (type: string, listener: unknown, options?: unknown) => void;
  const add = signal.addEventListener.bind(signal) as Listening;
  const remove = signal.removeEventListener.bind(signal) as Listening;
  signal.addEventListener = ((type, listener, options) => {
    listeners.add(listener);
    add(type, listener, options);
  }) as Listening as AbortSignal['addEventListener'];
  signal.removeEventListener = ((type, listener, options) => {
    listeners.delete(listener);
    remove(type, listener, options);
  }) as Listening as AbortSignal['removeEventListener'];

  const commands = await testSandbox(t, { clock: counting });
  const outcome = await commands.run({
    command: 'echo quick',
    workspace: ownFolder(await rootDirectory(t)),
    session: 'ses_test',
    timeoutMs: 1_000,
    signal,
  });
  t.equal(outcome.exitCode, 0);
  t.equal(outcome.output, 'quick\n');
  t.equal(armed, 2, 'a deadline for the preparation and one for the command');
  t.equal(cancelled, 2, 'both cancelled once the command ended');
  t.equal(listeners.size, 0, 'every abort listener is removed');
});

t.test('close kills every running command, refuses those waiting, and every new one', { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98766');
  const commands = await testSandbox(t, { clock: fakeClock() });
  const root = await rootDirectory(t);
  const running = commands.run({
    command: 'sleep 98766',
    workspace: ownFolder(root),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
  await processStarted('sleep 98766');
  const waiting = commands.run({
    command: `touch '${root}/ran'`,
    workspace: ownFolder(root),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });

  const closing = tracked(commands.close());
  t.match(await running, { cancelled: true, signal: 'SIGKILL' });
  await t.rejects(waiting, SandboxClosed, 'the one waiting for a slot is refused');
  await closing.promise;
  t.same(await processesLeft('sleep 98766'), []);
  await t.rejects(stat(join(root, 'ran')), { code: 'ENOENT' });
  await t.rejects(
    commands.run({
      command: 'true',
      workspace: ownFolder(root),
      session: 'ses_test',
      timeoutMs: 60_000,
      signal: neverAborted(),
    }),
    SandboxClosed,
  );
});
