import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { closeScan, ScanThread, scanDescriptors } from '../../../core/sandbox/scan-thread.js';
import { ScanRefusal, type ScanRequest } from '../../../core/sandbox/workspace-scan.js';

function scratch(t: { teardown(fn: () => unknown): void }): string {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), 'magi-scan-thread-test-')));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

function request(workspace: string): ScanRequest {
  return {
    workspace,
    pinned: null,
    daemonHome: '/nonexistent/magi-home',
    hiddenDirectories: [],
    hiddenPaths: [],
    outsidePaths: [],
    socket: null,
  };
}

/** This process's descriptors that name something under `directory`. */
function descriptorsUnder(directory: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${entry}`);
      if (target === directory || target.startsWith(`${directory}/`)) found.push(Number(entry));
    } catch {
      // the listing's own descriptor
    }
  }
  return found;
}

/** Waits until `condition` holds, doing `step` (else a short pause) between looks. */
async function until(
  condition: () => boolean,
  what: string,
  step: () => Promise<unknown> = () => sleep(10),
): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await step();
  }
}

const never = () => new AbortController().signal;

let repositories: string | null = null;

/** A workspace whose walk takes a moment: it holds each repository's .git open as it goes. */
function manyRepositories(): string {
  if (repositories !== null) return repositories;
  repositories = scratch(t);
  const folders = Array.from({ length: 400 }, (_, index) => `r${index % 20}/d${index}/.git`);
  execFileSync('mkdir', ['-p', ...folders], { cwd: repositories });
  return repositories;
}

const thread = new ScanThread();
t.teardown(() => thread.close());

t.test('a scan runs on the thread and hands its descriptors over', async (t) => {
  const root = scratch(t);
  mkdirSync(join(root, 'a'));
  writeFileSync(join(root, 'a', '.env'), 'x');
  const scan = await thread.scan(request(root), never());
  t.equal(Buffer.from(scan.root.path).toString(), root);
  t.same(
    scan.covers.map((cover) => Buffer.from(cover.path).toString()),
    [join(root, 'a', '.env')],
  );
  t.same(
    descriptorsUnder(root).sort(),
    scanDescriptors(scan).sort(),
    'open here, for the main thread to pass on',
  );
  t.same(scan.folders, { known: 2, read: 2 });
  t.ok(thread.known, 'the thread keeps what it learned');
  closeScan(scan);
  await until(() => descriptorsUnder(root).length === 0, 'the descriptors are closed');
});

t.test('the thread reads again only what changed, once its folders are old enough to trust', async (t) => {
  const root = scratch(t);
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  // Folders made a moment ago are read again until their last change is far enough behind a read.
  let read = -1;
  await until(
    () => read === 0,
    'a scan reads no folder',
    async () => {
      const scan = await thread.scan(request(root), never());
      read = scan.folders.read;
      closeScan(scan);
    },
  );
  writeFileSync(join(root, 'a', 'b', 'id_ecdsa'), 'x');
  const scan = await thread.scan(request(root), never());
  t.same(scan.folders, { known: 3, read: 1 }, 'the one folder that changed');
  t.same(
    scan.covers.map((cover) => Buffer.from(cover.path).toString()),
    [join(root, 'a', 'b', 'id_ecdsa')],
  );
  closeScan(scan);
});

t.test('a refusal comes back with its reason', async (t) => {
  await t.rejects(thread.scan(request('/'), never()), new ScanRefusal('workspace_not_allowed'));
  await t.rejects(
    thread.scan(request(join(scratch(t), 'missing')), never()),
    new ScanRefusal('workspace_unavailable'),
  );
});

t.test('a signal aborted before the scan starts nothing', async (t) => {
  const controller = new AbortController();
  controller.abort('timeout');
  const fresh = new ScanThread();
  t.equal(
    await fresh.scan(request(scratch(t)), controller.signal).catch((reason: unknown) => reason),
    'timeout',
  );
  t.same([fresh.asked, fresh.busy, fresh.known], [0, false, false], 'nothing was asked of a thread');
  await fresh.close();
});

t.test('a late answer to a scan given up has its descriptors closed, and the thread goes on', async (t) => {
  const root = scratch(t);
  mkdirSync(join(root, 'a', 'b'), { recursive: true });
  writeFileSync(join(root, 'a', 'b', '.env'), 'x');
  const controller = new AbortController();
  const scanning = thread.scan(request(root), controller.signal);
  // The main thread waits here without returning to its event loop, so the answer cannot be taken in before
  // the abort: once the root and both pins are open the walk is over and the answer is a scan.
  const deadline = Date.now() + 20_000;
  while (descriptorsUnder(root).length < 3) {
    if (Date.now() > deadline) throw new Error('the scan never opened its descriptors');
  }
  controller.abort('abort');
  t.equal(await scanning.catch((reason: unknown) => reason), 'abort', 'the scan is given up at once');
  t.ok(thread.busy, 'the thread has not answered yet');
  await until(() => !thread.busy, 'the thread has answered');
  t.same(descriptorsUnder(root), [], 'every descriptor of the late answer is closed');

  const next = await thread.scan(request(root), never());
  t.equal(Buffer.from(next.root.path).toString(), root, 'the same thread takes the next scan');
  closeScan(next);
});

t.test('a walk given up stops with its descriptors closed', async (t) => {
  const root = manyRepositories();
  const controller = new AbortController();
  const scanning = thread.scan(request(root), controller.signal);
  await until(() => descriptorsUnder(root).length > 0, 'the walk has started');
  controller.abort('timeout');
  t.equal(await scanning.catch((reason: unknown) => reason), 'timeout');
  await until(() => !thread.busy, 'the thread has stopped');
  t.same(descriptorsUnder(root), [], 'nothing the walk opened stays open');
});

t.test('scans run one at a time in the order asked; one waiting ends at its own signal', async (t) => {
  const root = manyRepositories();
  const queued = new ScanThread();
  t.teardown(() => queued.close());
  const first = queued.scan(request(root), never());
  const controller = new AbortController();
  const second = queued.scan(request(root), controller.signal);
  const third = queued.scan(request(root), never());
  t.same([queued.asked, queued.busy], [3, true]);
  controller.abort('timeout');
  t.equal(await second.catch((reason: unknown) => reason), 'timeout', 'given up while it waited');
  t.equal(queued.asked, 2, 'and out of the queue');
  const answers = await Promise.all([first, third]);
  for (const answer of answers) closeScan(answer);
  t.same(
    answers.map((answer) => answer.folders.known),
    [answers[0]!.folders.known, answers[0]!.folders.known],
  );
  t.same([queued.asked, queued.busy], [0, false]);
});

t.test('close refuses a scan in progress and those waiting', async (t) => {
  const root = manyRepositories();
  const closing = new ScanThread();
  const scanning = closing.scan(request(root), never());
  const waiting = closing.scan(request(root), never());
  await until(() => descriptorsUnder(root).length > 0, 'the walk has started');
  await closing.close();
  await t.rejects(scanning, new ScanRefusal('workspace_unavailable'));
  await t.rejects(waiting, new ScanRefusal('workspace_unavailable'));
  await until(() => descriptorsUnder(root).length === 0, 'the thread has ended');
  await closing.close();
});
