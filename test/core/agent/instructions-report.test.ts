import t from 'tap';
import { INSTRUCTIONS_LIMITS } from '../../../core/agent/instructions-limits.js';
import { WorkspaceInstructionsReport } from '../../../core/agent/instructions-report.js';
import type { InstructionsState } from '../../../core/agent/instructions-state.js';

const USED: InstructionsState = { state: 'used', bytes: 10, reason: null, linked: false };
const REFUSED: InstructionsState = { state: 'refused', bytes: 0, reason: 'outside_workspace', linked: false };

t.test('a read differs from the last of its workspace when its state, reason or link differs', async (t) => {
  const report = new WorkspaceInstructionsReport();
  t.equal(report.record('/w/a', USED), true, 'the first read');
  t.equal(report.record('/w/a', { ...USED, bytes: 12 }), false, 'the same state with another size');
  t.equal(report.record('/w/a', REFUSED), true);
  t.equal(report.record('/w/a', { ...REFUSED, reason: 'symlink' }), true);
  t.equal(report.record('/w/a', { ...USED, linked: true }), true);
  t.equal(report.record('/w/b', USED), true, 'another workspace');
  t.same(report.list(), [
    { workspace: '/w/b', ...USED },
    { workspace: '/w/a', ...USED, linked: true },
  ]);
});

t.test('reported_workspaces are remembered, the least recently read forgotten first', async (t) => {
  const report = new WorkspaceInstructionsReport();
  const max = INSTRUCTIONS_LIMITS.reported_workspaces;
  for (let i = 0; i < max; i += 1) report.record(`/w/${i}`, USED);
  t.equal(report.list().length, max);
  report.record('/w/0', USED);
  report.record('/w/new', USED);
  const listed = report.list().map((entry) => entry.workspace);
  t.equal(listed.length, max);
  t.same(listed.slice(0, 2), ['/w/new', '/w/0'], 'the most recent first');
  t.notOk(listed.includes('/w/1'), 'the least recently read is forgotten');
  t.equal(report.record('/w/1', USED), true, 'and is new again');
});

t.test('the list is cut to status_list_bytes; one workspace of the longest path always fits', async (t) => {
  const report = new WorkspaceInstructionsReport();
  const entryBytes = (workspace: string) => Buffer.byteLength(JSON.stringify({ workspace, ...USED }));
  const fixed = entryBytes('');
  // Two entries and their comma fill the list exactly, brackets included.
  const first = `/${'a'.repeat(Math.floor((INSTRUCTIONS_LIMITS.status_list_bytes - 3) / 2) - fixed - 1)}`;
  const secondBytes = INSTRUCTIONS_LIMITS.status_list_bytes - 3 - entryBytes(first) - fixed;
  report.record(`/${'b'.repeat(secondBytes - 1)}`, USED);
  report.record(first, USED);
  t.equal(Buffer.byteLength(JSON.stringify(report.list())), INSTRUCTIONS_LIMITS.status_list_bytes);
  t.equal(report.list().length, 2);
  report.record(`/${'b'.repeat(secondBytes)}`, USED);
  report.record(first, USED);
  t.same(
    report.list().map((entry) => entry.workspace),
    [first],
    'one byte more: the list stops before the entry that does not fit, and lists none older',
  );
  const longest = new WorkspaceInstructionsReport();
  longest.record(`/${'c'.repeat(4_095)}`, REFUSED);
  t.equal(longest.list().length, 1);
});
