import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { closeScan } from '../../../core/sandbox/scan-thread.js';
import { ScanRefusal, type ScanRequest } from '../../../core/sandbox/workspace-scan.js';
import { WorkspaceScanner } from '../../../core/sandbox/workspace-scanner.js';

function workspace(t: Test, ...files: string[]): string {
  const directory = realpathSync(mkdtempSync(join(tmpdir(), 'magi-scanner-test-')));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  for (const file of files) {
    mkdirSync(join(directory, file, '..'), { recursive: true });
    writeFileSync(join(directory, file), 'x');
  }
  return directory;
}

function request(root: string): ScanRequest {
  return {
    workspace: root,
    pinned: null,
    daemonHome: '/nonexistent/magi-home',
    hiddenDirectories: [],
    hiddenPaths: [],
    outsidePaths: [],
    socket: null,
  };
}

const never = () => new AbortController().signal;

async function covered(scanner: WorkspaceScanner, root: string, signal = never()): Promise<string[]> {
  const scan = await scanner.scan(request(root), signal);
  closeScan(scan);
  return scan.covers.map((cover) =>
    Buffer.from(cover.path)
      .toString()
      .slice(root.length + 1),
  );
}

t.test('the thread bound is a positive integer', async (t) => {
  for (const threads of [0, -1, 1.5]) t.throws(() => new WorkspaceScanner(threads), RangeError);
});

t.test('each workspace keeps a thread of its own, which knows it after its first scan', async (t) => {
  const scanner = new WorkspaceScanner(2);
  t.teardown(() => scanner.close());
  const one = workspace(t, 'a/.env');
  const two = workspace(t, 'b/id_rsa');
  t.notOk(scanner.known(one));
  t.same(await covered(scanner, one), ['a/.env']);
  t.ok(scanner.known(one));
  t.notOk(scanner.known(two), 'another workspace is not known for it');
  t.same(await covered(scanner, two), ['b/id_rsa']);
  t.same([scanner.known(one), scanner.known(two), scanner.threads], [true, true, 2]);
});

t.test('a workspace past the thread bound takes over the thread scanned least recently', async (t) => {
  const scanner = new WorkspaceScanner(2);
  t.teardown(() => scanner.close());
  const [one, two, three] = [workspace(t, '.env'), workspace(t, '.netrc'), workspace(t, '.npmrc')];
  await covered(scanner, one);
  await covered(scanner, two);
  await covered(scanner, one);
  t.same(await covered(scanner, three), ['.npmrc']);
  t.same(
    [scanner.known(one), scanner.known(two), scanner.known(three), scanner.threads],
    [true, false, true, 2],
    'the second, scanned least recently, was given up',
  );
});

t.test('while every thread is busy, another workspace waits; its signal ends the wait', async (t) => {
  const scanner = new WorkspaceScanner(1);
  t.teardown(() => scanner.close());
  const [one, two] = [workspace(t, '.env'), workspace(t, '.pgpass')];
  // Asked back to back, before the thread can answer: the first holds the only thread.
  const first = covered(scanner, one);
  const controller = new AbortController();
  const given = covered(scanner, two, controller.signal);
  const second = covered(scanner, two);
  controller.abort('timeout');
  t.equal(await given.catch((reason: unknown) => reason), 'timeout');
  t.same(await first, ['.env']);
  t.same(await second, ['.pgpass'], 'the other waits for the thread, then takes it over');
  t.same([scanner.known(one), scanner.known(two)], [false, true]);
});

t.test('two scans of one workspace run one after the other on its thread', async (t) => {
  const scanner = new WorkspaceScanner(4);
  t.teardown(() => scanner.close());
  const root = workspace(t, 'x/.env');
  const both = await Promise.all([covered(scanner, root), covered(scanner, root)]);
  t.same(both, [['x/.env'], ['x/.env']]);
  t.equal(scanner.threads, 1, 'one thread for the workspace');
});

t.test('close refuses the scans in progress and those waiting, and every later one', async (t) => {
  const scanner = new WorkspaceScanner(1);
  const [one, two] = [workspace(t, '.env'), workspace(t, '.netrc')];
  const running = covered(scanner, one);
  const waiting = covered(scanner, two);
  await scanner.close();
  await t.rejects(running, new ScanRefusal('workspace_unavailable'));
  await t.rejects(waiting, new ScanRefusal('workspace_unavailable'));
  await t.rejects(covered(scanner, one), new ScanRefusal('workspace_unavailable'));
});
