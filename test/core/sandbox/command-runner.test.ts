import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  CommandSandbox,
  credentialHiddenPaths,
  SandboxStartFailed,
  WorkspaceUnavailable,
} from '../../../core/sandbox/command-sandbox.js';
import { fakeClock } from '../../helpers/fake-clock.js';
import { bwrap, neverAborted, rootDirectory, sandboxUnavailable } from '../../helpers/sandbox-machine.js';

const skip = sandboxUnavailable ?? false;

function sandbox(t: { teardown(fn: () => unknown): void }, hiddenPaths: string[] = []): CommandSandbox {
  const commands = new CommandSandbox({ bwrap: bwrap!, clock: fakeClock(), hiddenPaths });
  t.teardown(() => commands.close());
  return commands;
}

function run(commands: CommandSandbox, workspace: string, command: string) {
  return commands.run({ command, workspace, timeoutMs: 60_000, signal: neverAborted() });
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
    sandbox(t),
    workspace,
    `echo kept > '${workspace}/inside'; echo lost > '${outside}/escaped'; echo lost > '${hostTmp}/escaped'; echo done`,
  );
  t.equal(outcome.exitCode, 0, 'the last command succeeds');
  t.equal(await readFile(join(workspace, 'inside'), 'utf8'), 'kept\n', 'the workspace file is written');
  await t.rejects(stat(join(outside, 'escaped')), { code: 'ENOENT' }, 'nothing is written outside');
  await t.rejects(stat(join(hostTmp, 'escaped')), { code: 'ENOENT' }, "nothing reaches the host's /tmp");
  t.match(outcome.output, /Read-only file system/, 'the root is read-only');
  t.match(outcome.output, /done\n$/);
});

t.test('a command has no capabilities and cannot remount the root writable', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const workspace = join(root, 'workspace');
  await mkdir(workspace);
  const outcome = await run(
    sandbox(t),
    workspace,
    `grep CapEff /proc/self/status; mount -o remount,bind,rw / && touch '${root}/remounted'`,
  );
  t.match(outcome.output, /CapEff:\s+0+\n/, 'no effective capability');
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

  const root = await rootDirectory(t);
  const outcome = await run(sandbox(t), root, `'${process.execPath}' -e '${script}'`);
  t.match(outcome.output, /^(ECONNREFUSED|ENETUNREACH)\n$/, 'node ran and its connection failed');
  t.equal(connections, 0, 'the listener saw no connection');
});

t.test("the daemon's home, passed as hidden, shows nothing of itself", { skip }, async (t) => {
  const root = await rootDirectory(t);
  const daemonHome = join(root, 'magi-home');
  const workspace = join(root, 'workspace');
  await mkdir(join(daemonHome, 'state'), { recursive: true });
  await mkdir(workspace);
  await writeFile(join(daemonHome, 'config.json'), '{"api_key":"sk-home-secret-1"}\n');
  await writeFile(join(daemonHome, 'state', 'history.db'), 'sk-home-secret-2');

  const outcome = await run(
    sandbox(t, [daemonHome]),
    workspace,
    `echo "entries: $(ls -A '${daemonHome}' | wc -l)"; cat '${daemonHome}/config.json' '${daemonHome}/state/history.db'; echo x > '${daemonHome}/planted'`,
  );
  t.notMatch(outcome.output, /sk-home-secret/, 'no secret is read');
  t.match(outcome.output, /^entries: 0\n/, 'the listing is empty');
  t.match(outcome.output, /No such file/, 'the files are not there');
  await t.rejects(
    stat(join(daemonHome, 'planted')),
    { code: 'ENOENT' },
    'nothing is planted in the real home',
  );
  t.equal(await readFile(join(daemonHome, 'config.json'), 'utf8'), '{"api_key":"sk-home-secret-1"}\n');
});

t.test(
  "a user's credential folders and files read as empty, even inside the workspace",
  { skip },
  async (t) => {
    const root = await rootDirectory(t);
    const home = join(root, 'ada');
    await mkdir(join(home, '.ssh'), { recursive: true });
    await mkdir(join(home, '.config', 'gh'), { recursive: true });
    await writeFile(join(home, '.ssh', 'id_ed25519'), 'sk-credential-ssh');
    await writeFile(join(home, '.config', 'gh', 'hosts.yml'), 'sk-credential-gh');
    await writeFile(join(home, '.netrc'), 'sk-credential-netrc');
    await writeFile(join(home, 'notes.txt'), 'plain notes\n');

    // The workspace is the home itself, so every hidden path lies inside it.
    const outcome = await run(
      sandbox(t, credentialHiddenPaths(home)),
      home,
      'ls -A .ssh .config/gh; cat .ssh/id_ed25519 .config/gh/hosts.yml .netrc notes.txt; echo x > .netrc; echo x > .ssh/planted',
    );
    t.notMatch(outcome.output, /sk-credential/, 'no credential is read');
    t.match(outcome.output, /plain notes\n/, 'the rest of the workspace is visible');
    t.match(
      outcome.output,
      /cannot create \.netrc: Read-only file system/,
      'a hidden file cannot be overwritten',
    );
    t.equal(
      await readFile(join(home, '.netrc'), 'utf8'),
      'sk-credential-netrc',
      'the real file is untouched',
    );
    await t.rejects(
      stat(join(home, '.ssh', 'planted')),
      { code: 'ENOENT' },
      'nothing lands in the real folder',
    );
  },
);

t.test(
  'a hidden folder around the workspace stays hidden while the workspace stays usable',
  { skip },
  async (t) => {
    const root = await rootDirectory(t);
    const home = join(root, 'home');
    const workspace = join(home, 'project');
    await mkdir(workspace, { recursive: true });
    await writeFile(join(home, 'secret.txt'), 'sk-around-secret');
    await writeFile(join(workspace, 'readme.md'), 'hello\n');

    const outcome = await run(
      sandbox(t, [home]),
      workspace,
      'ls -A ..; cat ../secret.txt; cat readme.md; echo made > made.txt; echo "$PWD"',
    );
    t.notMatch(outcome.output, /sk-around-secret/);
    t.match(outcome.output, /^project\n/, 'the hidden folder holds only the workspace');
    t.match(outcome.output, /hello\n/);
    t.match(outcome.output, new RegExp(`${workspace}\\n$`), 'the command starts in the workspace');
    t.equal(await readFile(join(workspace, 'made.txt'), 'utf8'), 'made\n');
  },
);

t.test("nothing of the daemon's environment reaches the command", { skip }, async (t) => {
  const before = process.env.MAGI_API_KEY;
  process.env.MAGI_API_KEY = 'sk-environment-secret';
  t.teardown(() => {
    if (before === undefined) delete process.env.MAGI_API_KEY;
    else process.env.MAGI_API_KEY = before;
  });
  const root = await rootDirectory(t);
  // PID 1 is bwrap's own init, whose environment is the one bwrap was started with.
  const outcome = await run(sandbox(t), root, "env; echo ---; tr '\\0' '\\n' < /proc/1/environ");
  t.notMatch(outcome.output, /sk-environment-secret|MAGI_API_KEY/, 'neither the shell nor bwrap has it');
  const [shell = ''] = outcome.output.split('---\n');
  const variables = new Map(
    shell
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  t.equal(variables.get('PATH'), '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  t.equal(variables.get('HOME'), root);
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

t.test('stdin is empty and the exit code comes back', { skip }, async (t) => {
  const root = await rootDirectory(t);
  const outcome = await run(sandbox(t), root, 'cat; echo read-nothing; exit 7');
  t.same(outcome, {
    exitCode: 7,
    signal: null,
    timedOut: false,
    cancelled: false,
    output: 'read-nothing\n',
    truncated: false,
    outputBytes: 13,
  });
});

t.test('a workspace that is not a directory is refused before anything runs', { skip }, async (t) => {
  const root = await rootDirectory(t);
  await t.rejects(run(sandbox(t), join(root, 'missing'), 'true'), WorkspaceUnavailable);
});

t.test('a bwrap that cannot be executed is a rejection, never a run without it', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'magi-sandbox-test-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const commands = new CommandSandbox({
    bwrap: join(root, 'missing-bwrap'),
    clock: fakeClock(),
    hiddenPaths: [],
  });
  t.teardown(() => commands.close());
  await t.rejects(run(commands, root, `touch '${root}/ran'`), SandboxStartFailed);
  await t.rejects(stat(join(root, 'ran')), { code: 'ENOENT' }, 'the command did not run');
});

t.test('out-of-range requests and options are refused', async (t) => {
  const commands = new CommandSandbox({ bwrap: '/nonexistent/bwrap', clock: fakeClock(), hiddenPaths: [] });
  t.teardown(() => commands.close());
  for (const timeoutMs of [999, 600_001, 1500.5, Number.NaN, 0]) {
    await t.rejects(
      commands.run({ command: 'true', workspace: '/', timeoutMs, signal: neverAborted() }),
      RangeError,
      `timeout ${timeoutMs}`,
    );
  }
  await t.rejects(
    commands.run({ command: 'echo a\0b', workspace: '/', timeoutMs: 1_000, signal: neverAborted() }),
    { name: 'RangeError', message: 'the command contains a NUL character' },
    'a NUL, which no process argument can hold',
  );
  t.throws(
    () => new CommandSandbox({ bwrap: 'b', clock: fakeClock(), hiddenPaths: [], outputBytes: 0 }),
    RangeError,
  );
});
