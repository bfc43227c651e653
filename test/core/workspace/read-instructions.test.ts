import { linkSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { systemClock } from '../../../core/clock.js';
import { type InstructionsWindow, readInstructions } from '../../../core/workspace/read-instructions.js';
import { workspaceToolErrorOf } from '../../../core/workspace/workspace-tool-errors.js';
import { WorkspaceTools } from '../../../core/workspace/workspace-tools.js';
import { withWorkspace } from '../../../core/workspace/workspace-walk.js';
import { pinnedWorkspace } from '../../helpers/confined.js';
import { type Sandbox, SECRET, sandbox } from './workspace-fixture.js';

const LENGTH = 32_768;

/** Reads AGENTS.md at the sandbox's workspace on this thread: the window, or the refusal's code. */
function read(box: Sandbox, followLink = true, length = LENGTH): InstructionsWindow | string {
  try {
    return withWorkspace(pinnedWorkspace(box.ws), [box.state], (held) =>
      readInstructions(held, { name: 'AGENTS.md', length, followLink }),
    );
  } catch (error) {
    return workspaceToolErrorOf(error);
  }
}

const agents = (box: Sandbox) => join(box.ws, 'AGENTS.md');

/** Whatever AGENTS.md is now (a link, a file, a folder), removed without following it. */
const removeAgents = (box: Sandbox) => rmSync(agents(box), { force: true, recursive: true });

t.test('a file within the length is used whole', async (t) => {
  const box = sandbox(t);
  writeFileSync(agents(box), 'Run the tests first.\n');
  t.same(read(box), { content: 'Run the tests first.\n', cut: false, linked: false });
});

t.test('a file of exactly the length is whole; one byte more is cut to the length', async (t) => {
  const box = sandbox(t);
  writeFileSync(agents(box), 'a'.repeat(LENGTH));
  t.same(read(box), { content: 'a'.repeat(LENGTH), cut: false, linked: false });
  writeFileSync(agents(box), `${'a'.repeat(LENGTH)}b`);
  t.same(read(box), { content: 'a'.repeat(LENGTH), cut: true, linked: false });
});

t.test('a 34.5 KB file gives its first 32 KiB, cut between characters', async (t) => {
  const box = sandbox(t);
  const text = `${'x'.repeat(LENGTH - 1)}€${'y'.repeat(34_500 - LENGTH - 2)}`;
  writeFileSync(agents(box), text);
  const window = read(box) as InstructionsWindow;
  t.equal(window.cut, true);
  t.equal(window.content, 'x'.repeat(LENGTH - 1), 'the euro sign across the bound is left out whole');
});

t.test('a symbolic link to a file of the same workspace is followed, once', async (t) => {
  const box = sandbox(t);
  writeFileSync(join(box.ws, 'CLAUDE.md'), 'Shared rules.\n');
  mkdirSync(join(box.ws, 'docs'));
  writeFileSync(join(box.ws, 'docs', 'agents.md'), 'Docs rules.\n');
  const shared = { content: 'Shared rules.\n', cut: false, linked: true };
  for (const [target, expected] of [
    ['CLAUDE.md', shared],
    ['./CLAUDE.md', shared],
    ['docs/../CLAUDE.md', shared],
    [join(box.ws, 'CLAUDE.md'), shared],
    ['docs/agents.md', { content: 'Docs rules.\n', cut: false, linked: true }],
  ] as const) {
    symlinkSync(target, agents(box));
    t.same(read(box), expected, target);
    t.equal(read(box, false), 'symlink', `${target}: refused where links are not followed`);
    removeAgents(box);
  }
});

t.test('a link that leads outside the workspace is refused', async (t) => {
  const box = sandbox(t);
  for (const target of [
    join(box.outside, 'secret.txt'),
    '../outside/secret.txt',
    '..',
    '/etc/hostname',
    join(box.ws, '..', 'outside', 'secret.txt'),
  ]) {
    symlinkSync(target, agents(box));
    t.equal(read(box), 'outside_workspace', target);
    removeAgents(box);
  }
});

t.test('what a link leads to is walked like any workspace path', async (t) => {
  const box = sandbox(t);
  writeFileSync(join(box.ws, '.env'), SECRET);
  mkdirSync(join(box.ws, 'folder'));
  writeFileSync(join(box.ws, 'twice.md'), 'x');
  linkSync(join(box.ws, 'twice.md'), join(box.outside, 'second'));
  symlinkSync(join(box.outside, 'secret.txt'), join(box.ws, 'CLAUDE.md'));
  symlinkSync(join(box.outside), join(box.ws, 'out'));
  const cases: Array<[string, string]> = [
    ['.env', 'credential_path'],
    ['CLAUDE.md', 'symlink'],
    ['out/secret.txt', 'symlink'],
    ['folder', 'not_regular_file'],
    ['.', 'not_regular_file'],
    ['twice.md', 'hard_linked'],
    ['missing.md', 'not_found'],
  ];
  for (const [target, code] of cases) {
    symlinkSync(target, agents(box));
    t.equal(read(box), code, target);
    removeAgents(box);
  }
});

t.test(
  'no file, a hard link, a binary window and a folder are refused as read_file refuses them',
  async (t) => {
    const box = sandbox(t);
    t.equal(read(box), 'not_found');
    writeFileSync(join(box.outside, 'linked'), 'x');
    linkSync(join(box.outside, 'linked'), agents(box));
    t.equal(read(box), 'hard_linked');
    removeAgents(box);
    writeFileSync(agents(box), Buffer.from([0x61, 0x00, 0x62]));
    t.equal(read(box), 'binary_file');
    removeAgents(box);
    mkdirSync(agents(box));
    t.equal(read(box), 'not_regular_file');
  },
);

t.test('the workspace threads read it like a call, and a cancelled read answers at once', async (t) => {
  const box = sandbox(t);
  writeFileSync(agents(box), 'Threads.\n');
  const tools = new WorkspaceTools({ clock: systemClock, threads: 1 });
  t.teardown(() => tools.close(1_000));
  const request = {
    workspace: pinnedWorkspace(box.ws),
    excludedDirectories: [box.state],
    name: 'AGENTS.md',
    length: LENGTH,
  };
  const outcome = await tools.readInstructions(request, new AbortController().signal, 'ses_1');
  t.same(outcome, { ok: true, output: JSON.stringify({ content: 'Threads.\n', cut: false, linked: false }) });
  const aborted = AbortSignal.abort();
  t.match(await tools.readInstructions(request, aborted, 'ses_1'), { ok: false, code: 'cancelled' });
  t.match(
    await tools.readInstructions(
      { ...request, workspace: pinnedWorkspace(box.state) },
      new AbortController().signal,
      'ses_1',
    ),
    { ok: false, code: 'excluded_directory' },
    'daemon state is refused as a workspace',
  );
});
