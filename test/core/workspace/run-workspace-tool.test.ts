import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { systemClock } from '../../../core/clock.js';
import {
  WORKSPACE_TOOL_ERRORS,
  type WorkspaceToolError,
} from '../../../core/workspace/workspace-tool-errors.js';
import type {
  WorkspaceToolName,
  WorkspaceToolOutcome,
} from '../../../core/workspace/workspace-tool-request.js';
import { WorkspaceTools } from '../../../core/workspace/workspace-tools.js';
import {
  type CallOptions,
  INSIDE,
  refused,
  type Sandbox,
  SECRET,
  sandbox,
  treeOf,
} from './workspace-fixture.js';

const deviceUnavailable = process.getuid?.() === 0 ? false : 'mknod of a device node needs root';

interface Row {
  name: string;
  /** The path of the row's thing when a file is expected, and when a directory is. */
  file: string;
  directory: string;
  options?: (s: Sandbox) => CallOptions;
  read: WorkspaceToolError;
  list: WorkspaceToolError;
  write: WorkspaceToolError;
}

const belowState = (s: Sandbox) => join(s.state, 'sessions/one');

const ROWS: Row[] = [
  {
    name: 'a symlink as the last component',
    file: 'link.txt',
    directory: 'linkdir',
    read: 'symlink',
    list: 'symlink',
    write: 'symlink',
  },
  {
    name: 'a symlink as an intermediate component',
    file: 'linkdir/secret.txt',
    directory: 'linkdir/sub',
    read: 'symlink',
    list: 'symlink',
    write: 'symlink',
  },
  {
    name: '..',
    file: '../outside/secret.txt',
    directory: '..',
    read: 'invalid_path',
    list: 'invalid_path',
    write: 'invalid_path',
  },
  {
    name: 'an absolute path',
    file: '/etc/hostname',
    directory: '/etc',
    read: 'invalid_path',
    list: 'invalid_path',
    write: 'invalid_path',
  },
  {
    name: 'an empty component',
    file: 'dir//f.txt',
    directory: 'dir//',
    read: 'invalid_path',
    list: 'invalid_path',
    write: 'invalid_path',
  },
  {
    name: 'a hard link to a file outside',
    file: 'hard.txt',
    directory: 'hard.txt',
    read: 'hard_linked',
    list: 'not_directory',
    write: 'hard_linked',
  },
  {
    name: 'a FIFO',
    file: 'fifo',
    directory: 'fifo',
    read: 'not_regular_file',
    list: 'not_directory',
    write: 'not_regular_file',
  },
  {
    name: 'a credential-like path',
    file: '.ssh/id_rsa',
    directory: '.ssh',
    read: 'credential_path',
    list: 'credential_path',
    write: 'credential_path',
  },
  {
    name: 'a credential-like file name',
    file: 'config/.env.local',
    directory: '.git',
    read: 'credential_path',
    list: 'credential_path',
    write: 'credential_path',
  },
  {
    name: 'the filesystem root as the workspace',
    file: 'etc/hostname',
    directory: 'etc',
    options: () => ({ workspace: '/' }),
    read: 'workspace_not_allowed',
    list: 'workspace_not_allowed',
    write: 'workspace_not_allowed',
  },
  {
    name: 'a symbolic link to the filesystem root as the workspace',
    file: 'etc/hostname',
    directory: 'etc',
    options: (s) => ({ workspace: `${s.ws}-to-root` }),
    read: 'workspace_not_allowed',
    list: 'workspace_not_allowed',
    write: 'workspace_not_allowed',
  },
  {
    name: 'daemon state as the workspace itself',
    file: 'history.txt',
    directory: '.',
    options: (s) => ({ workspace: s.state }),
    read: 'excluded_directory',
    list: 'excluded_directory',
    write: 'excluded_directory',
  },
  {
    name: 'daemon state as an ancestor of the workspace',
    file: 'notes.md',
    directory: '.',
    options: (s) => ({ workspace: belowState(s) }),
    read: 'excluded_directory',
    list: 'excluded_directory',
    write: 'excluded_directory',
  },
  {
    name: 'daemon state beneath the workspace',
    file: 'inner-state/history.txt',
    directory: 'inner-state',
    options: (s) => ({ excludedDirectories: [join(s.ws, 'inner-state')] }),
    read: 'excluded_directory',
    list: 'excluded_directory',
    write: 'excluded_directory',
  },
  {
    name: 'a missing workspace',
    file: 'f.txt',
    directory: '.',
    options: (s) => ({ workspace: join(s.ws, 'missing') }),
    read: 'workspace_unavailable',
    list: 'workspace_unavailable',
    write: 'workspace_unavailable',
  },
];

const DEVICE_ROW: Row = {
  name: 'a device node',
  file: 'null',
  directory: 'null',
  read: 'not_regular_file',
  list: 'not_directory',
  write: 'not_regular_file',
};

function populate(s: Sandbox, withDevice: boolean): void {
  symlinkSync(join(s.outside, 'secret.txt'), join(s.ws, 'link.txt'));
  symlinkSync(s.outside, join(s.ws, 'linkdir'));
  symlinkSync('/', `${s.ws}-to-root`);
  mkdirSync(join(s.outside, 'sub'));
  mkdirSync(join(s.ws, 'dir'));
  writeFileSync(join(s.ws, 'dir/f.txt'), INSIDE);
  linkSync(join(s.outside, 'secret.txt'), join(s.ws, 'hard.txt'));
  execFileSync('mkfifo', [join(s.ws, 'fifo')]);
  if (withDevice) execFileSync('mknod', [join(s.ws, 'null'), 'c', '1', '3']);
  mkdirSync(join(s.ws, '.ssh'));
  writeFileSync(join(s.ws, '.ssh/id_rsa'), SECRET);
  mkdirSync(join(s.ws, 'config'));
  writeFileSync(join(s.ws, 'config/.env.local'), SECRET);
  mkdirSync(belowState(s), { recursive: true });
  writeFileSync(join(belowState(s), 'notes.md'), SECRET);
  mkdirSync(join(s.ws, 'inner-state'));
  writeFileSync(join(s.ws, 'inner-state/history.txt'), SECRET);
}

interface Call {
  label: string;
  tool: WorkspaceToolName;
  args: Record<string, unknown>;
  options: CallOptions;
  expected: WorkspaceToolError;
  /** What the refusal was about: no message may contain any of it. */
  about: string[];
}

function callsOf(s: Sandbox, rows: readonly Row[]): Call[] {
  return rows.flatMap((row) => {
    const options = row.options?.(s) ?? {};
    const about = [row.file, row.directory, SECRET, s.ws, s.outside, s.state].filter(
      (text) => text.length > 2,
    );
    const call = (
      tool: WorkspaceToolName,
      args: Record<string, unknown>,
      expected: WorkspaceToolError,
    ): Call => ({
      label: `${tool}: ${row.name}`,
      tool,
      args,
      options,
      expected,
      about,
    });
    return [
      call('read_file', { path: row.file }, row.read),
      call('list_directory', { path: row.directory }, row.list),
      call('search_files', { pattern: 'OUTSIDE', path: row.directory }, row.list),
      call('write_file', { path: row.file, content: `written ${SECRET}` }, row.write),
      call('edit_file', { path: row.file, old_text: SECRET, new_text: 'edited' }, row.write),
    ];
  });
}

function checkOutcome(t: Test, call: Call, outcome: WorkspaceToolOutcome): void {
  refused(t, outcome, call.expected, call.label);
  if (!outcome.ok) {
    for (const text of call.about)
      t.notOk(outcome.message.includes(text), `${call.label}: message free of ${text}`);
  }
}

/** Nothing outside the workspace, and no daemon state, was written or replaced. */
function checkUntouched(t: Test, s: Sandbox): void {
  t.equal(readFileSync(join(s.outside, 'secret.txt'), 'utf8'), SECRET, 'the outside file is untouched');
  t.same(treeOf(s.outside), ['secret.txt', 'sub'], 'nothing is created outside');
  t.same(treeOf(s.state), ['history.txt', 'sessions', 'sessions/one', 'sessions/one/notes.md']);
  t.equal(readFileSync(join(s.state, 'history.txt'), 'utf8'), SECRET, 'state is untouched');
  t.equal(readFileSync(join(s.ws, 'inner-state/history.txt'), 'utf8'), SECRET);
  t.equal(readFileSync(join(s.ws, '.ssh/id_rsa'), 'utf8'), SECRET);
  t.equal(readFileSync(join(s.ws, 'config/.env.local'), 'utf8'), SECRET);
}

t.test('the capture matrix applied to every tool, on the calling thread', async (t) => {
  const s = sandbox(t);
  populate(s, false);
  for (const call of callsOf(s, ROWS)) checkOutcome(t, call, s.run(call.tool, call.args, call.options));
  checkUntouched(t, s);
});

t.test('the capture matrix applied to every tool, on the pool threads', async (t) => {
  const s = sandbox(t);
  populate(s, false);
  const tools = new WorkspaceTools({ clock: systemClock, threads: 3 });
  t.teardown(() => tools.close(5_000));
  const calls = callsOf(s, ROWS);
  const outcomes = await Promise.all(
    // Each call its own session's, so that all three threads take part.
    calls.map((call, index) =>
      tools.run(s.request(call.tool, call.args, call.options), new AbortController().signal, `ses_${index}`),
    ),
  );
  for (const [index, call] of calls.entries()) checkOutcome(t, call, outcomes[index]!);
  checkUntouched(t, s);
});

t.test('a device node, for every tool', { skip: deviceUnavailable }, async (t) => {
  const s = sandbox(t);
  populate(s, true);
  for (const call of callsOf(s, [DEVICE_ROW]))
    checkOutcome(t, call, s.run(call.tool, call.args, call.options));
  checkUntouched(t, s);
});

t.test('every code has one fixed message, and no two codes share one', async (t) => {
  const messages = Object.values(WORKSPACE_TOOL_ERRORS);
  t.equal(new Set(messages).size, messages.length);
  t.equal(messages.length, 24);
});

t.test('the same workspace is ordinary when its state is not excluded', async (t) => {
  const s = sandbox(t);
  populate(s, false);
  const outcome = s.run(
    'read_file',
    { path: 'notes.md' },
    { workspace: belowState(s), excludedDirectories: [] },
  );
  t.ok(outcome.ok && outcome.output.includes(SECRET), 'the walk up alone refused it');
});
