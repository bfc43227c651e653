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

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
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
  closeScan(scan);
  await until(() => descriptorsUnder(root).length === 0, 'the descriptors are closed');

  const again = await thread.scan(request(root), never());
  t.equal(thread.abandoned, 0);
  closeScan(again);
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
  t.equal(fresh.abandoned, 0, 'no thread was started to give up on');
  await fresh.close();
});

t.test('a late answer to a scan given up has its descriptors closed', async (t) => {
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
  t.equal(thread.abandoned, 1);
  await until(() => thread.abandoned === 0, 'the abandoned thread ends once it has answered');
  t.same(descriptorsUnder(root), [], 'every descriptor of the late answer is closed');

  const next = await thread.scan(request(root), never());
  t.equal(Buffer.from(next.root.path).toString(), root, 'the next scan starts a new thread');
  closeScan(next);
});

t.test('a walk given up stops with its descriptors closed, and the thread ends', async (t) => {
  const root = manyRepositories();
  const controller = new AbortController();
  const scanning = thread.scan(request(root), controller.signal);
  await until(() => descriptorsUnder(root).length > 0, 'the walk has started');
  controller.abort('timeout');
  t.equal(await scanning.catch((reason: unknown) => reason), 'timeout');
  await until(() => thread.abandoned === 0, 'the thread has stopped and ended');
  t.same(descriptorsUnder(root), [], 'nothing the walk opened stays open');
});

t.test('threads given up on and still alive, up to the bound, refuse further scans', async (t) => {
  const root = manyRepositories();
  const bounded = new ScanThread(1);
  t.teardown(() => bounded.close());
  const controller = new AbortController();
  const scanning = bounded.scan(request(root), controller.signal);
  controller.abort('timeout');
  // Before the event loop runs again, the abandoned thread cannot have ended: it is still counted.
  const refused = bounded.scan(request(root), never());
  t.equal(bounded.abandoned, 1);
  await t.rejects(refused, new ScanRefusal('workspace_unavailable'), 'one past the bound is refused');
  t.equal(await scanning.catch((reason: unknown) => reason), 'timeout');
  await until(() => bounded.abandoned === 0, 'the abandoned thread has ended');
  const next = await bounded.scan(request(root), never());
  t.ok(next.root.fd > 0, 'once it ended, scans run again');
  closeScan(next);
});

t.test('close refuses a scan in progress, whose thread ends once it has answered', async (t) => {
  const root = manyRepositories();
  const scanning = thread.scan(request(root), never());
  await until(() => descriptorsUnder(root).length > 0, 'the walk has started');
  await thread.close();
  await t.rejects(scanning, new ScanRefusal('workspace_unavailable'));
  await until(() => thread.abandoned === 0, 'the thread has ended');
  t.same(descriptorsUnder(root), []);
  await thread.close();
});
