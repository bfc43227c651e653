import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { processAlive, sweepStaleGroups } from '../../../core/sandbox/stale-groups.js';

t.test('the groups of a daemon that is gone are removed, every other one is left', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'magi-cgroups-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  const make = (...names: string[]) => mkdirSync(join(directory, ...names), { recursive: true });
  make('magid-101', 'command-1');
  make('magid-101', 'command-7');
  make('magid-102-commands', 'command-3');
  make('magid-102-daemon');
  make('magid-200', 'command-1');
  make('magid-300');
  make('magid-103', 'not-ours');
  make('magid-x');
  make('unrelated');
  writeFileSync(join(directory, 'magid-104'), 'a file, not a group');
  const alive = new Set([200]);

  const removed = await sweepStaleGroups(directory, 300, (pid) => alive.has(pid));
  t.same(removed.sort(), ['magid-101', 'magid-102-commands', 'magid-102-daemon']);
  t.notOk(existsSync(join(directory, 'magid-101')), 'with its command groups');
  t.ok(existsSync(join(directory, 'magid-200', 'command-1')), 'a live daemon’s groups stay');
  t.ok(existsSync(join(directory, 'magid-300')), 'and this daemon’s own');
  t.ok(existsSync(join(directory, 'magid-103', 'not-ours')), 'a group holding something else stays');
  t.ok(existsSync(join(directory, 'magid-x')) && existsSync(join(directory, 'unrelated')));
  t.ok(existsSync(join(directory, 'magid-104')));
  t.same(await sweepStaleGroups(join(directory, 'missing'), 300, () => false), [], 'a missing folder');
});

t.test('a process is alive while signal 0 reaches it', async (t) => {
  t.ok(processAlive(process.pid));
  t.ok(processAlive(1), 'init, whoever owns it');
  t.notOk(processAlive(2 ** 22 + 1), 'beyond the largest pid the kernel gives');
});
