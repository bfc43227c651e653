import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { ownFolder } from '../../../core/confinement/confined-workspace.js';
import type { CommandRequest, CommandSandbox } from '../../../core/sandbox/command-sandbox.js';
import type { ResourceControl } from '../../../core/sandbox/resource-control.js';
import {
  type ScannedWorkspace,
  ScanRefusal,
  type ScanRequest,
} from '../../../core/sandbox/workspace-scan.js';
import { WorkspaceScanner } from '../../../core/sandbox/workspace-scanner.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import {
  killOnTeardown,
  neverAborted,
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
  cancelled: false,
  output: '',
  truncated: false,
  stdoutBytes: 0,
  stderrBytes: 0,
};

function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const done = () => {
    settled = true;
  };
  promise.then(done, done);
  return { promise, settled: () => settled };
}

/** Lets what the event loop has ready run, so that a settlement that was due would have happened. */
const moment = () => sleep(50);

function ask(
  commands: CommandSandbox,
  session: string,
  workspace: string,
  command: string,
  more: Partial<CommandRequest> = {},
) {
  return commands.run({
    command,
    workspace: ownFolder(workspace),
    session,
    timeoutMs: 60_000,
    signal: neverAborted(),
    ...more,
  });
}

/** The real scanner, but the scans of the workspaces held back wait until let go (or their signal aborts). */
class HeldScanner {
  readonly real = new WorkspaceScanner();
  readonly asked: Array<{ workspace: string; reason: () => unknown }> = [];
  readonly #held = new Map<string, Array<() => void>>();

  hold(workspace: string): void {
    this.#held.set(workspace, []);
  }

  letGo(workspace: string): void {
    const waiting = this.#held.get(workspace) ?? [];
    this.#held.delete(workspace);
    for (const go of waiting) go();
  }

  known(workspace: string): boolean {
    return !this.#held.has(workspace) && this.real.known(workspace);
  }

  async scan(request: ScanRequest, signal: AbortSignal): Promise<ScannedWorkspace> {
    this.asked.push({ workspace: request.workspace, reason: () => signal.reason });
    const waiting = this.#held.get(request.workspace);
    if (waiting !== undefined) {
      await new Promise<void>((resolve, reject) => {
        waiting.push(resolve);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    return this.real.scan(request, signal);
  }

  close(): Promise<void> {
    return this.real.close();
  }
}

t.test(
  'a command still waiting when its limit has passed since it asked never starts, and says so',
  { skip },
  async (t) => {
    killOnTeardown(t, 'sleep 98771');
    const clock = fakeClock();
    const commands = await testSandbox(t, { clock, concurrent: 1 });
    const root = await rootDirectory(t);
    const first = new AbortController();
    const holding = ask(commands, 'ses_a', root, 'sleep 98771', { signal: first.signal });
    await processStarted('sleep 98771');

    const waiting = tracked(ask(commands, 'ses_b', root, `touch '${root}/waited'`, { timeoutMs: 1_000 }));
    clock.advance(999);
    await moment();
    t.notOk(waiting.settled(), 'waiting for the one slot, within its limit');
    t.same(commands.activity(), { slots_in_use: 1, waiting: 1, waiting_sessions: 1, scanning: 0 });
    clock.advance(1);
    t.same(await waiting.promise, { ...NOT_STARTED, queueTimedOut: true }, 'not timed_out: it never ran');

    const abort = new AbortController();
    const aborted = ask(commands, 'ses_b', root, `touch '${root}/aborted'`, { signal: abort.signal });
    abort.abort();
    t.same(await aborted, { ...NOT_STARTED, cancelled: true }, 'given up while waiting');
    t.same(commands.activity(), { slots_in_use: 1, waiting: 0, waiting_sessions: 0, scanning: 0 });

    first.abort();
    t.match(await holding, { cancelled: true });
    for (const name of ['waited', 'aborted'])
      await t.rejects(stat(join(root, name)), { code: 'ENOENT' }, name);
    t.equal(commands.running, 0);
  },
);

t.test("a command's time limit runs from its start, not from when it asked", { skip }, async (t) => {
  killOnTeardown(t, 'sleep 98772', 'sleep 98773');
  const clock = fakeClock();
  const commands = await testSandbox(t, { clock, concurrent: 1 });
  const root = await rootDirectory(t);
  const first = new AbortController();
  const holding = ask(commands, 'ses_a', root, 'sleep 98772', { signal: first.signal });
  await processStarted('sleep 98772');
  const later = tracked(ask(commands, 'ses_b', root, 'echo started; sleep 98773', { timeoutMs: 1_000 }));
  clock.advance(900);
  first.abort();
  await holding;
  await processStarted('sleep 98773');
  clock.advance(999);
  await moment();
  t.notOk(later.settled(), '1,899 ms after it asked, 999 ms after it started: it runs on');
  t.ok((await processesWith('sleep 98773')).length > 0);
  clock.advance(1);
  t.match(await later.promise, {
    timedOut: true,
    queueTimedOut: false,
    output: 'started\n',
    signal: 'SIGKILL',
  });
});

t.test(
  "one session's long commands hold half of the slots: another session's command runs",
  { skip },
  async (t) => {
    const markers = ['sleep 98774', 'sleep 98775', 'sleep 98776', 'sleep 98777'];
    killOnTeardown(t, ...markers);
    const commands = await testSandbox(t, { clock: fakeClock(), concurrent: 4 });
    const root = await rootDirectory(t);
    const stop = new AbortController();
    const long = markers.map((marker) => ask(commands, 'ses_a', root, marker, { signal: stop.signal }));
    await processStarted(markers[0]!);
    await processStarted(markers[1]!);
    t.same(commands.activity(), { slots_in_use: 2, waiting: 2, waiting_sessions: 1, scanning: 0 });
    const other = await ask(commands, 'ses_b', root, 'echo ran', { timeoutMs: 10_000 });
    t.match(other, { exitCode: 0, output: 'ran\n' }, 'it ran while the first session still held its half');
    for (const marker of markers.slice(2)) t.same(await processesWith(marker), [], `${marker} still waits`);
    stop.abort();
    t.same(
      (await Promise.all(long)).map((outcome) => [outcome.cancelled, outcome.exitCode === null]),
      [
        [true, true],
        [true, true],
        [true, true],
        [true, true],
      ],
    );
    t.same(commands.activity(), { slots_in_use: 0, waiting: 0, waiting_sessions: 0, scanning: 0 });
  },
);

t.test(
  'a workspace met for the first time is checked before its command waits for a slot, holding none',
  { skip },
  async (t) => {
    const scanner = new HeldScanner();
    const clock = fakeClock();
    const commands = await testSandbox(t, { clock, concurrent: 1, scanner });
    const [slow, quick] = [await rootDirectory(t), await rootDirectory(t)];
    scanner.hold(slow);
    const first = tracked(ask(commands, 'ses_a', slow, 'echo first'));
    await moment();
    t.same(commands.activity(), { slots_in_use: 0, waiting: 0, waiting_sessions: 0, scanning: 1 });
    t.match(await ask(commands, 'ses_b', quick, 'echo second'), { exitCode: 0, output: 'second\n' });
    t.notOk(first.settled(), 'the first is still being checked');
    scanner.letGo(slow);
    t.match(await first.promise, { exitCode: 0, output: 'first\n' });
    t.same(
      scanner.asked.map((entry) => entry.workspace),
      [slow, quick, quick, slow],
      'each workspace once outside the slot, and once in it',
    );
    t.match(await ask(commands, 'ses_a', slow, 'echo again'), { exitCode: 0 });
    t.equal(scanner.asked.length, 5, 'a known workspace is checked in its slot only');
  },
);

t.test("the check of a workspace counts against the time before the command's start", async (t) => {
  const scanner = new HeldScanner();
  const clock = fakeClock();
  const commands = await testSandbox(t, { clock, scanner });
  const root = await rootDirectory(t);
  scanner.hold(root);
  const scanning = tracked(ask(commands, 'ses_a', root, 'true', { timeoutMs: 1_000 }));
  await moment();
  t.same(
    scanner.asked.map((entry) => entry.workspace),
    [root],
    'the scan was asked for',
  );
  clock.advance(999);
  await moment();
  t.notOk(scanning.settled(), 'still being checked within the limit');
  clock.advance(1);
  t.same(await scanning.promise, { ...NOT_STARTED, queueTimedOut: true });
  t.equal(scanner.asked[0]!.reason(), 'timeout', 'the scan was told why it was given up');

  const controller = new AbortController();
  const aborted = ask(commands, 'ses_a', root, 'true', { timeoutMs: 1_000, signal: controller.signal });
  await moment();
  controller.abort();
  t.same(await aborted, { ...NOT_STARTED, cancelled: true }, 'an abort ends the check too');
  t.equal(commands.running, 0);
});

t.test('a workspace refused in its slot leaves no group behind, and frees the slot', async (t) => {
  let made = 0;
  let removed = 0;
  const control: ResourceControl = {
    enforcedBy: 'cgroup_v1',
    group: async () => {
      made += 1;
      return {
        join: async () => {},
        remove: async () => {
          removed += 1;
        },
      };
    },
    close: async () => {},
  };
  const refusing = {
    known: () => true,
    scan: async () => {
      throw new ScanRefusal('workspace_too_large');
    },
    close: async () => {},
  };
  const commands = await testSandbox(t, { clock: fakeClock(), control, scanner: refusing });
  const root = await rootDirectory(t);
  await t.rejects(ask(commands, 'ses_a', root, 'true'), new ScanRefusal('workspace_too_large'));
  t.same([made, removed], [1, 1], 'the group made beside the check is removed');
  t.same(commands.activity(), { slots_in_use: 0, waiting: 0, waiting_sessions: 0, scanning: 0 });
});

t.test('what one command plants or moves is covered from the next command on', { skip }, async (t) => {
  const commands = await testSandbox(t, { clock: fakeClock() });
  const root = await rootDirectory(t);
  const run = async (command: string) => (await ask(commands, 'ses_a', root, command)).output;
  await run('mkdir -p a/b/c && echo plain > a/b/c/notes');
  await run('mkdir -p a/b/c/d && echo sk-planted > a/b/c/d/.env && echo sk-key > a/b/id_rsa');
  t.equal(await run('cat a/b/c/d/.env a/b/id_rsa a/b/c/notes'), 'plain\n', 'both read as empty');
  t.match(await run('mv a/b a/moved'), /busy/, 'a folder above a cover is a mount point no command can move');
  await rename(join(root, 'a/b'), join(root, 'a/moved'));
  t.equal(
    await run('cat a/moved/c/d/.env a/moved/id_rsa; ls a'),
    'moved\n',
    'moved from outside: covered under its new name',
  );
});
