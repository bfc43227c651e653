import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Clock } from '../../../core/clock.js';
import { CommandSandbox, SandboxClosed } from '../../../core/sandbox/command-sandbox.js';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.js';
import {
  bwrap,
  killOnTeardown,
  neverAborted,
  processesLeft,
  processesWith,
  processStarted,
  rootDirectory,
  sandboxUnavailable,
} from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

function sandbox(t: { teardown(fn: () => unknown): void }, clock: FakeClock = fakeClock()): CommandSandbox {
  const commands = new CommandSandbox({ bwrap: bwrap!, clock, hiddenPaths: [] });
  t.teardown(() => commands.close());
  return commands;
}

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

t.test(
  'a command is killed whole at its time limit on the injected clock, and not before',
  { skip },
  async (t) => {
    const clock = fakeClock();
    killOnTeardown(t, 'sleep 98761', 'sleep 98762');
    const root = await rootDirectory(t);
    const running = tracked(
      sandbox(t, clock).run({
        command: 'echo started; sleep 98761 & sleep 98762',
        workspace: root,
        timeoutMs: 1_000,
        signal: neverAborted(),
      }),
    );
    await processStarted('sleep 98761');
    await processStarted('sleep 98762');

    clock.advance(999);
    await sleep(200);
    t.notOk(running.settled(), 'still running just before the limit');
    t.ok((await processesWith('sleep 98762')).length > 0, 'the command is alive');

    clock.advance(1);
    const outcome = await running.promise;
    t.same(outcome, {
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: true,
      cancelled: false,
      output: 'started\n',
      truncated: false,
      outputBytes: 8,
    });
    t.same(await processesLeft('sleep 98761'), [], 'the background process is gone');
    t.same(await processesLeft('sleep 98762'), [], 'the foreground process is gone');
  },
);

t.test('an aborted command is killed whole and reported cancelled', { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98763');
  const root = await rootDirectory(t);
  const controller = new AbortController();
  const running = sandbox(t).run({
    command: 'sleep 98763',
    workspace: root,
    timeoutMs: 60_000,
    signal: controller.signal,
  });
  await processStarted('sleep 98763');
  controller.abort();
  const outcome = await running;
  t.equal(outcome.cancelled, true);
  t.equal(outcome.timedOut, false);
  t.equal(outcome.signal, 'SIGKILL');
  t.equal(outcome.exitCode, null);
  t.same(await processesLeft('sleep 98763'), [], 'no process of it is left');
});

t.test('a request aborted before it starts runs nothing', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const controller = new AbortController();
  controller.abort();
  const outcome = await sandbox(t).run({
    command: `touch '${root}/ran'`,
    workspace: root,
    timeoutMs: 60_000,
    signal: controller.signal,
  });
  t.same(outcome, {
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: true,
    output: '',
    truncated: false,
    outputBytes: 0,
  });
  await t.rejects(stat(join(root, 'ran')), { code: 'ENOENT' });
});

t.test('a process left in the background dies with the command that started it', { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98764');
  const root = await rootDirectory(t);
  const outcome = await sandbox(t).run({
    command: 'sleep 98764 >/dev/null 2>&1 & echo left',
    workspace: root,
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
  t.equal(outcome.exitCode, 0);
  t.equal(outcome.output, 'left\n');
  t.same(await processesLeft('sleep 98764'), [], 'the PID namespace took it along');
});

t.test('close kills every running command, waits for them, and refuses new ones', { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98765', 'sleep 98766');
  const root = await rootDirectory(t);
  const commands = sandbox(t);
  const first = commands.run({
    command: 'sleep 98765',
    workspace: root,
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
  const second = commands.run({
    command: 'sleep 98766',
    workspace: root,
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
  await processStarted('sleep 98765');
  await processStarted('sleep 98766');

  const closing = tracked(commands.close());
  const outcomes = await Promise.all([first, second]);
  await closing.promise;
  for (const outcome of outcomes) {
    t.equal(outcome.cancelled, true);
    t.equal(outcome.signal, 'SIGKILL');
  }
  t.same(await processesLeft('sleep 98765'), []);
  t.same(await processesLeft('sleep 98766'), []);
  await t.rejects(
    commands.run({ command: 'true', workspace: root, timeoutMs: 60_000, signal: neverAborted() }),
    SandboxClosed,
  );
});

t.test('a command that ends on its own leaves no timer and no abort listener behind', { skip }, async (t) => {
  const clock = fakeClock();
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

  const commands = new CommandSandbox({ bwrap: bwrap!, clock: counting, hiddenPaths: [] });
  t.teardown(() => commands.close());
  const root = await rootDirectory(t);
  const outcome = await commands.run({ command: 'echo quick', workspace: root, timeoutMs: 1_000, signal });
  t.equal(outcome.exitCode, 0);
  t.equal(outcome.output, 'quick\n');
  t.equal(armed, 1, 'one deadline was armed');
  t.equal(cancelled, 1, 'and cancelled once the command ended');
  t.equal(listeners.size, 0, 'the abort listener is removed');
});
