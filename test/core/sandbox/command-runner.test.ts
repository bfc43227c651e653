import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ownFolder } from '../../../core/confinement/confined-workspace.js';
import { homeCredentialPaths } from '../../../core/confinement/home-credential-paths.js';
import {
  CommandSandbox,
  type CommandSandboxOptions,
  SandboxClosed,
} from '../../../core/sandbox/command-sandbox.js';
import { COMMAND_PATH } from '../../../core/sandbox/sandbox-view.js';
import { ScanRefusal } from '../../../core/sandbox/workspace-scan.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import {
  neverAborted,
  RLIMITS_ONLY,
  rootDirectory,
  sandboxUnavailable,
  testSandbox,
} from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

function run(commands: CommandSandbox, workspace: string, command: string) {
  return commands.run({
    command,
    workspace: ownFolder(workspace),
    session: 'ses_test',
    timeoutMs: 60_000,
    signal: neverAborted(),
  });
}

/** One sandbox for the checks of this file that need nothing of their own; its PATH names a folder of its own. */
let shared: CommandSandbox | null = null;
async function sandbox(): Promise<CommandSandbox> {
  shared ??= await testSandbox(t, { view: { commandPath: `/opt/magi-test/bin:${COMMAND_PATH}` } });
  return shared;
}

t.test('a command writes inside its workspace and nowhere else', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const workspace = join(root, 'workspace');
  const outside = join(root, 'outside');
  await mkdir(workspace);
  await mkdir(outside);
  const hostTmp = await mkdtemp(join(tmpdir(), 'magi-sandbox-test-'));
  t.teardown(() => rm(hostTmp, { recursive: true, force: true }));

  const outcome = await run(
    await sandbox(),
    workspace,
    `echo kept > '${workspace}/inside'; echo lost > '${outside}/escaped'; echo lost > '${hostTmp}/escaped'; echo lost > /etc/magi-escaped; echo done`,
  );
  t.equal(outcome.exitCode, 0, 'the last command succeeds');
  t.equal(await readFile(join(workspace, 'inside'), 'utf8'), 'kept\n', 'the workspace file is written');
  await t.rejects(stat(join(outside, 'escaped')), { code: 'ENOENT' }, 'nothing is written outside');
  await t.rejects(stat(join(hostTmp, 'escaped')), { code: 'ENOENT' }, "nothing reaches the host's /tmp");
  await t.rejects(stat('/etc/magi-escaped'), { code: 'ENOENT' });
  t.match(outcome.output, /Read-only file system/, 'the root is read-only');
  // Not at the end: the refusals come on stderr, a pipe of its own that may be read after stdout's last line.
  t.match(outcome.output, /^done$/m, 'the command went on');
});

t.test('a command has no capabilities and cannot remount the root writable', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const workspace = join(root, 'workspace');
  await mkdir(workspace);
  const outcome = await run(
    await sandbox(),
    workspace,
    `grep -E 'Cap(Eff|Prm|Amb)' /proc/self/status; mount -o remount,bind,rw / && touch '${root}/remounted'`,
  );
  t.match(outcome.output, /CapPrm:\s+0+\nCapEff:\s+0+\nCapAmb:\s+0+\n/, 'no capability at all');
  t.not(outcome.exitCode, 0, 'the remount fails');
  await t.rejects(stat(join(root, 'remounted')), { code: 'ENOENT' });
});

t.test('a command cannot reach a listener on the loopback address', { skip }, async (t) => {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address() as { port: number };
  const script = `const s = require("net").connect(${port}, "127.0.0.1"); s.on("connect", () => { console.log("connected"); s.end(); }); s.on("error", (e) => console.log(e.code));`;
  const outcome = await run(await sandbox(), await rootDirectory(t), `'${process.execPath}' -e '${script}'`);
  t.match(outcome.output, /^(ECONNREFUSED|ENETUNREACH)\n$/, 'node ran and its connection failed');
  t.equal(connections, 0, 'the listener saw no connection');
});

t.test("nothing of the daemon's environment reaches the command", { skip }, async (t) => {
  const before = process.env.MAGI_API_KEY;
  process.env.MAGI_API_KEY = 'sk-environment-secret';
  t.teardown(() => {
    if (before === undefined) delete process.env.MAGI_API_KEY;
    else process.env.MAGI_API_KEY = before;
  });
  const root = await rootDirectory(t);
  // PID 1 is bwrap's own init, whose environment is the one bwrap was started with.
  const outcome = await run(await sandbox(), root, 'env; echo ---; cat /proc/1/environ');
  t.notMatch(outcome.output, /sk-environment-secret|MAGI_API_KEY/, 'neither the shell nor bwrap has it');
  const [shell = '', init = ''] = outcome.output.split('---\n');
  t.same(
    // The test runner adds variables of its own to every child this process starts.
    init
      .split('\0')
      .filter((entry) => entry !== '' && !/^(_TAPJS_\w+|NODE_OPTIONS|NODE_V8_COVERAGE)=/.test(entry)),
    ['PWD=/'],
    "bwrap's own environment is empty but for the PWD its shell sets, which names no folder of the daemon",
  );
  const variables = new Map(
    shell
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  t.equal(variables.get('PATH'), `/opt/magi-test/bin:${COMMAND_PATH}`, 'the PATH the view resolved');
  t.equal(variables.get('HOME'), root, 'without a user, HOME is the workspace');
  t.equal(variables.get('LANG'), 'C.UTF-8');
  t.equal(variables.get('TERM'), 'dumb');
  t.same(
    [...variables.keys()].filter(
      (name) => !['PATH', 'HOME', 'LANG', 'TERM', 'PWD', 'OLDPWD', 'SHLVL', '_'].includes(name),
    ),
    [],
    'nothing else but what the shell sets itself',
  );
});

t.test('stdin is empty and the exit code comes back, whatever it is', { skip }, async (t) => {
  const commands = await sandbox();
  const root = await rootDirectory(t);
  t.same(await run(commands, root, 'cat; echo read-nothing; exit 7'), {
    exitCode: 7,
    signal: null,
    timedOut: false,
    queueTimedOut: false,
    cancelled: false,
    output: 'read-nothing\n',
    truncated: false,
    stdoutBytes: 13,
    stderrBytes: 0,
  });
  t.match(await run(commands, root, 'exit 1'), { exitCode: 1, signal: null }, 'a command failing with 1 ran');
  t.match(await run(commands, root, 'false'), { exitCode: 1 });
  t.match(
    await run(commands, root, 'kill -KILL $$'),
    { exitCode: 137, signal: null },
    'a command killed inside: bwrap exits 128 and its signal',
  );
  t.match(await run(commands, root, 'exit 255'), { exitCode: 255 });
});

t.test('the command is a shell command however it looks, never options of bwrap', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const outcome = await run(await sandbox(), root, 'echo --bind / / -- "$HOME" --args 3');
  t.equal(outcome.output, `--bind / / -- ${root} --args 3\n`);
});

t.test(
  "the user's home: emptied when the workspace holds it, covered where it is the workspace",
  { skip },
  async (t) => {
    const root = await rootDirectory(t);
    const workspace = join(root, 'workspace');
    const home = join(workspace, 'ada');
    for (const [path, text] of [
      ['project/.env', 'sk-home-env'],
      ['project/code.txt', 'home code'],
      ['notes.txt', 'home notes'],
      ['.ssh/id_ed25519', 'sk-home-ssh'],
      ['.cache/huggingface/token', 'sk-home-token'],
      ['.cache/pip/wheel', 'cached'],
      ['.local/state/x', 'state'],
    ] as const) {
      await mkdir(join(home, path, '..'), { recursive: true });
      await writeFile(join(home, path), text);
    }
    await writeFile(join(workspace, 'README.md'), 'the workspace\n');
    const commands = await testSandbox(t, {
      view: {
        userHome: home,
        emptied: ['/tmp', '/var/tmp', '/run', '/dev/shm', home],
        credentialPaths: homeCredentialPaths(home),
      },
    });
    const holding = await run(
      commands,
      workspace,
      'cat README.md; ls -A ada; cat ada/notes.txt ada/project/code.txt',
    );
    t.match(holding.output, /^the workspace\n/);
    t.notMatch(holding.output, /home notes|home code|sk-home/, 'nothing of the home shows, pinned or not');
    t.match(holding.output, /No such file or directory/);

    const being = await run(
      commands,
      home,
      // The refusals of the covered files go to stderr, which a loaded machine may deliver after stdout.
      'echo "HOME=$HOME"; cat notes.txt project/code.txt; cat project/.env .ssh/id_ed25519 .cache/huggingface/token 2>/dev/null; ls -A .ssh; cat .cache/pip/wheel .local/state/x',
    );
    t.match(being.output, new RegExp(`^HOME=${home}\nhome noteshome code`), 'the home is the workspace');
    t.notMatch(being.output, /sk-home/, 'its credentials are covered, at every depth');
    t.match(being.output, /cachedstate$/, 'what is not a credential is there');
  },
);

t.test('a workspace that cannot be confined is refused before anything runs', { skip }, async (t) => {
  const commands = await sandbox();
  const root = await rootDirectory(t);
  await t.rejects(run(commands, join(root, 'missing'), 'true'), new ScanRefusal('workspace_unavailable'));
  await t.rejects(run(commands, '/', `touch '${root}/ran'`), new ScanRefusal('workspace_not_allowed'));
  await t.rejects(stat(join(root, 'ran')), { code: 'ENOENT' });
  t.equal(commands.running, 0, 'the slot is free again');
});

t.test('a bwrap that cannot be executed is a rejection, never a run without it', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'magi-sandbox-test-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const commands = await testSandbox(t, { bwrap: join(root, 'missing-bwrap') });
  await t.rejects(run(commands, root, `touch '${root}/ran'`), { name: 'SandboxStartFailed' });
  await t.rejects(stat(join(root, 'ran')), { code: 'ENOENT' }, 'the command did not run');
  t.equal(commands.running, 0);
  await commands.close();
  await t.rejects(run(commands, root, 'true'), SandboxClosed, 'a closed sandbox runs nothing');
});

t.test('out-of-range requests and options are refused', async (t) => {
  const commands = await sandbox();
  for (const timeoutMs of [999, 600_001, 1500.5, Number.NaN, 0, -1]) {
    await t.rejects(
      commands.run({
        command: 'true',
        workspace: ownFolder('/'),
        session: 'ses_test',
        timeoutMs,
        signal: neverAborted(),
      }),
      { name: 'RangeError', message: 'the command time limit is out of range' },
      `timeout ${timeoutMs}`,
    );
  }
  for (const timeoutMs of [1_000, 600_000]) {
    await t.rejects(
      commands.run({
        command: 'true',
        workspace: ownFolder('/'),
        session: 'ses_test',
        timeoutMs,
        signal: neverAborted(),
      }),
      new ScanRefusal('workspace_not_allowed'),
      `timeout ${timeoutMs} is in range: the request goes on to the workspace`,
    );
  }
  await t.rejects(
    commands.run({
      command: 'echo a\0b',
      workspace: ownFolder('/'),
      session: 'ses_test',
      timeoutMs: 1_000,
      signal: neverAborted(),
    }),
    { name: 'RangeError', message: 'the command contains a NUL character' },
    'a NUL, which no process argument can hold',
  );
  for (const outputBytes of [0, -1, 1.5]) {
    t.throws(() => new CommandSandbox({ ...INERT, outputBytes }), RangeError, `${outputBytes}`);
  }
});

/** Options of a sandbox that is only constructed. */
const INERT: CommandSandboxOptions = {
  bwrap: '/nonexistent/bwrap',
  clock: fakeClock(),
  view: {
    daemonHome: '/nonexistent',
    socket: null,
    userHome: null,
    emptied: [],
    readable: [],
    credentialPaths: [],
    commandPath: COMMAND_PATH,
    skipped: [],
    system: { masked: [], secrets: [] },
  },
  seccomp: Buffer.alloc(0),
  control: RLIMITS_ONLY,
  bounds: { memoryBytes: 1, processes: 1 },
  limitProcess: () => {},
  coverDirectory: '/nonexistent/covers',
};
