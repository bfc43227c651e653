import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { defaultSocketPath } from '../../core/endpoint/socket-path.js';
import { WORKSPACE_TOOL_LIMITS } from '../../core/workspace/workspace-tool-limits.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { sandboxUnavailable } from '../helpers/sandbox-machine.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { shortTempDir, startDaemon } from './spawn-daemon.js';

// Every attack a hostile model (or a prompt-injected file) could make through run_command, over real
// daemons, the real bwrap and a scripted model; each must be refused with nothing changed outside the
// workspace.
t.setTimeout(240_000);

const skip = { skip: sandboxUnavailable ?? false };
// Lower bounds than the defaults, so that reaching them takes a moment only.
const ENABLED = JSON.stringify({
  tools: {
    enabled: ['run_command', 'write_file'],
    run_command: { memory_bytes: 268_435_456, processes: 64 },
  },
});

/** A file a command must never read: its content is a marker the test looks for in every output. */
const SECRET = (name: string) => `sk-attack-${name.replace(/[^a-z0-9]/gi, '-')}-secret`;

/** Credential files of the user's home that the sandbox must hide (the user's home is emptied whole). */
const HOME_SECRETS = [
  '.env',
  '.envrc',
  'id_rsa',
  'server.pem',
  'prod.tfstate',
  '.huggingface/token',
  '.cache/huggingface/token',
  '.kaggle/kaggle.json',
  '.claude/.credentials.json',
  '.codex/auth.json',
  '.ipython/profile_default/history.sqlite',
  '.ssh/id_ed25519',
  '.magi-unlisted/notes.txt',
];

/** The workspace's own secrets, at depths 1 to 3, which the file tools refuse and commands must not read. */
const WORKSPACE_SECRETS = [
  '.env',
  'app/.git-credentials',
  'app/deploy/.ssh/id_rsa',
  'app/deploy/keys/prod.pem',
];

interface Scene {
  root: string;
  userHome: string;
  daemonHome: string;
  workspace: string;
  runtime: string;
  /** The daemon's socket: its home's default under the runtime folder. */
  socket: string;
  provider: ScriptedProvider;
  client: WireClient;
  session: string;
  control: string;
}

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** Every file under `directory` with its size and modification time, to find any change. */
function snapshot(directory: string): string[] {
  const entries: string[] = [];
  const walk = (path: string): void => {
    for (const name of readdirSync(path)) {
      const full = join(path, name);
      const info = statSync(full);
      entries.push(`${full} ${info.size} ${info.mtimeMs}`);
      if (info.isDirectory()) walk(full);
    }
  };
  walk(directory);
  return entries.sort();
}

async function listen(t: Test, path: string): Promise<{ server: Server; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { server, connections: () => count };
}

/** A daemon whose user's home is a fake one full of secrets, its socket at the XDG default. */
async function scene(t: Test): Promise<Scene> {
  const root = shortTempDir(t);
  const userHome = join(root, 'user');
  const daemonHome = join(root, 'magi');
  const workspace = join(root, 'project');
  const runtime = join(root, 'xdg');
  for (const file of HOME_SECRETS) write(join(userHome, file), SECRET(`home-${file}`));
  for (const file of WORKSPACE_SECRETS) write(join(workspace, file), SECRET(`workspace-${file}`));
  write(join(workspace, 'README.md'), 'a project\n');
  execFileSync('git', ['init', '-q', workspace]);
  mkdirSync(runtime, { mode: 0o700 });
  mkdirSync(daemonHome, { mode: 0o700 });
  writeFileSync(join(daemonHome, 'config.json'), ENABLED);
  write(join(daemonHome, 'credentials.json'), SECRET('daemon-credentials'));
  const provider = await ScriptedProvider.start(t);
  await startDaemon(t, {
    socket: null,
    home: daemonHome,
    args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
    env: { HOME: userHome, XDG_RUNTIME_DIR: runtime },
  });
  const socket = defaultSocketPath(daemonHome, { XDG_RUNTIME_DIR: runtime }, userHome);
  const { client } = await connectSocket(socket);
  t.teardown(() => client.close());
  await client.initialize([]);
  const { session, control } = await claimedSession(client, workspace);
  return { root, userHome, daemonHome, workspace, runtime, socket, provider, client, session, control };
}

/** One turn in which the model runs `commands` at once; the parsed result of each, in order. */
async function runCommands(
  t: Test,
  scene: Pick<Scene, 'provider' | 'client' | 'session' | 'control'>,
  commands: readonly string[],
): Promise<Array<Record<string, unknown>>> {
  const { provider, client, session, control } = scene;
  provider.replyToolCalls(
    commands.map((command, index) => ({
      id: `c${index}`,
      name: 'run_command',
      arguments: JSON.stringify({ command, timeout_ms: 120_000 }),
    })),
  );
  provider.reply(['done']);
  const before = provider.requests.length;
  await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
  const terminal = await client.event('turn.terminal', 180_000);
  t.match(terminal.payload, { status: 'completed' }, 'the turn completes');
  const messages = provider.requests[before + 1]!.body.messages as Array<{
    role: string;
    tool_call_id: string;
    content: string;
  }>;
  return commands.map((_, index) => {
    const message = messages.find(
      (candidate) => candidate.role === 'tool' && candidate.tool_call_id === `c${index}`,
    )!;
    return JSON.parse(message.content) as Record<string, unknown>;
  });
}

const PYTHON_CONNECT = (path: string) =>
  `python3 -c 'import socket,sys
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    print("connected")
except OSError as error:
    print("refused", error.errno)' '${path}'`;

t.test(
  'no command reaches a Unix socket, the user’s home, the workspace’s secrets or git’s hooks',
  skip,
  async (t) => {
    const s = await scene(t);
    const outsideListener = await listen(t, join('/var/tmp', `magi-attack-${process.pid}.sock`));
    t.teardown(() => rmSync(join('/var/tmp', `magi-attack-${process.pid}.sock`), { force: true }));
    const insideListener = await listen(t, join(s.workspace, 'inside.sock'));
    const abstractName = `magi-attack-${process.pid}`;
    const abstractListener = await listen(t, `\0${abstractName}`);
    // The daemon writes its own state into its home meanwhile: there only the files the test put are compared.
    const untouched = [s.userHome, s.runtime].map((directory) => [directory, snapshot(directory)] as const);
    const daemonFiles = ['config.json', 'credentials.json'].map((name) => join(s.daemonHome, name));
    const daemonBefore = daemonFiles.map((path) => `${readFileSync(path, 'utf8')} ${statSync(path).mtimeMs}`);
    const gitConfig = readFileSync(join(s.workspace, '.git', 'config'), 'utf8');

    const [sockets, home, secrets, git, proc] = await runCommands(t, s, [
      [
        PYTHON_CONNECT(s.socket),
        PYTHON_CONNECT(join('/var/tmp', `magi-attack-${process.pid}.sock`)),
        PYTHON_CONNECT(join(s.workspace, 'inside.sock')),
        `python3 -c 'import socket
try:
    socket.socket(socket.AF_UNIX).connect("\\0${abstractName}"); print("connected")
except OSError as error: print("refused", error.errno)'`,
        `ls -A '${s.runtime}' 2>/dev/null | wc -l`,
      ].join('; '),
      `ls -A '${s.userHome}' 2>/dev/null | wc -l; ${HOME_SECRETS.map((file) => `cat '${join(s.userHome, file)}'`).join('; ')}; cat '${s.daemonHome}/credentials.json' '${s.daemonHome}/config.json'; echo planted > '${s.userHome}/.bashrc'; echo end`,
      `${WORKSPACE_SECRETS.map((file) => `cat '${file}'; echo x >> '${file}'`).join('; ')}; ls -A app/deploy/.ssh | wc -l; cat README.md`,
      'echo x > .git/hooks/post-checkout; echo y >> .git/config; git config core.hooksPath /tmp; ls .git/hooks | grep -c post-checkout; git status --porcelain | head -3',
      "tr '\\0' ' ' < /proc/1/cmdline; echo; ls /proc/self/fd | tr '\\n' ' '",
    ]);

    t.equal(
      (sockets!.output as string).match(/refused 1\n/g)?.length,
      4,
      'every connect fails with EPERM: the XDG socket, a listener outside, one inside the workspace, an abstract one',
    );
    t.match(sockets!.output, /\n0\n$/, 'the runtime folder is empty inside');
    t.equal(outsideListener.connections() + insideListener.connections() + abstractListener.connections(), 0);

    for (const result of [home, secrets, git, proc]) {
      t.notMatch(result!.output, /sk-attack-/, 'no secret is ever read');
    }
    t.match(home!.output, /^0\n/, 'the user’s home is empty inside');
    t.match(home!.output, /No such file/);
    t.match(home!.output, /\nend\n/, 'the command went on to its end');
    t.match(secrets!.output, /Read-only file system/, 'a covered secret cannot be written either');
    t.match(
      secrets!.output,
      /0\na project\n$/,
      'a covered folder is empty, the rest of the workspace readable',
    );
    t.match(git!.output, /cannot create \.git\/hooks\/post-checkout: Read-only file system/);
    t.match(git!.output, /cannot create \.git\/config: Read-only file system|\.git\/config: Read-only/);
    t.match(git!.output, /\n0\n/, 'no hook was planted');
    t.equal(
      readFileSync(join(s.workspace, '.git', 'config'), 'utf8'),
      gitConfig,
      'the repository’s config is unchanged',
    );
    t.notMatch(proc!.output, new RegExp(`${s.daemonHome}|${s.userHome}`), 'bwrap’s arguments name no home');
    t.match(
      proc!.output,
      /\n0 1 2 3 $/,
      'no descriptor but stdio (and the listing’s own) reaches the command',
    );

    for (const file of WORKSPACE_SECRETS) {
      t.equal(
        readFileSync(join(s.workspace, file), 'utf8'),
        SECRET(`workspace-${file}`),
        `${file} is untouched`,
      );
    }
    for (const [directory, before] of untouched)
      t.same(snapshot(directory), before, `nothing changed in ${directory}`);
    t.same(
      daemonFiles.map((path) => `${readFileSync(path, 'utf8')} ${statSync(path).mtimeMs}`),
      daemonBefore,
      'the daemon’s config and credentials are untouched',
    );
  },
);

t.test('workspaces that cannot be confined are refused, when created and at every call', skip, async (t) => {
  const s = await scene(t);
  for (const [workspace, name] of [
    [s.daemonHome, 'the daemon’s home'],
    [join(s.daemonHome, 'state'), 'a folder inside the home'],
    ['/', 'the filesystem root'],
  ] as const) {
    mkdirSync(workspace, { recursive: true });
    await t.rejects(
      s.client.call('session.create', { workspace, title: null }, { operation: op() }),
      { code: 'invalid_payload' },
      name,
    );
  }
  const toRoot = join(s.root, 'to-root');
  symlinkSync('/', toRoot);
  await t.rejects(
    s.client.call('session.create', { workspace: toRoot, title: null }, { operation: op() }),
    { code: 'invalid_payload' },
    'a symlink to the root',
  );

  // A workspace swapped for a symlink to the root after its session was made.
  const swapped = join(s.root, 'swapped');
  mkdirSync(swapped);
  const later = await claimedSession(s.client, swapped);
  rmSync(swapped, { recursive: true });
  symlinkSync('/', swapped);
  s.provider.replyToolCalls([
    {
      id: 'w',
      name: 'write_file',
      arguments: JSON.stringify({ path: `var/tmp/magi-attack-${process.pid}`, content: 'x' }),
    },
    { id: 'c', name: 'run_command', arguments: JSON.stringify({ command: 'touch escaped' }) },
  ]);
  s.provider.reply(['done']);
  const before = s.provider.requests.length;
  await s.client.call(
    'turn.start',
    { prompt: 'go' },
    { session: later.session, control: later.control, operation: op() },
  );
  await s.client.event('turn.terminal', 60_000);
  const messages = s.provider.requests[before + 1]!.body.messages as Array<{ role: string; content: string }>;
  const results = messages.filter((message) => message.role === 'tool').map((message) => message.content);
  t.equal(results.length, 2);
  for (const result of results)
    t.match(result, /workspace_not_allowed/, 'refused at call time, by descriptor');
  t.throws(() => statSync(`/var/tmp/magi-attack-${process.pid}`), 'nothing was written outside');
  t.throws(() => statSync('/escaped'));
});

t.test('memory, processes and concurrency are bounded', skip, async (t) => {
  const s = await scene(t);
  const [memory, processes] = await runCommands(t, s, [
    'python3 -c "b = bytearray(3 * 1024 ** 3); print(len(b))"; echo "status $?"',
    `python3 -c 'import os, time
started = 0
try:
    for _ in range(600):
        if os.fork() == 0:
            time.sleep(20); os._exit(0)
        started += 1
except OSError:
    pass
print("started", started)'`,
  ]);
  t.notMatch(memory!.output, /3221225472/, 'the 3 GiB allocation never succeeds');
  t.match(memory!.output, /status (137|1)\n/, 'it is killed or refused');
  const started = Number(/started (\d+)/.exec(processes!.output as string)?.[1]);
  t.ok(started < 64, `the process bound stops the forks (${started} started)`);
  t.match(await s.client.call('status'), {
    sandbox: {
      run_command: 'offered',
      bounds: { concurrent_commands: 4, memory_bytes: 268_435_456, processes: 64, core_dump_bytes: 0 },
    },
  });

  const commands = Array.from(
    { length: 16 },
    (_, index) =>
      `mkdir -p .running; touch .running/${index}; ls .running | wc -l > .seen-${index}; sleep 1; rm .running/${index}; cat .seen-${index}`,
  );
  const results = await runCommands(t, s, commands);
  const seen = results.map((result) => Number((result.output as string).trim()));
  t.equal(results.filter((result) => result.exit_code === 0).length, 16, 'all sixteen ran');
  t.ok(Math.max(...seen) <= 4, `never more than four at once (at most ${Math.max(...seen)} seen)`);
  t.ok(Math.max(...seen) >= 2, 'and they do run side by side');
});

t.test(
  'a socket named with --socket under /var/tmp or inside the workspace is unreachable too',
  skip,
  async (t) => {
    const root = shortTempDir(t);
    const workspace = join(root, 'project');
    // The daemon keeps its socket only in a private folder.
    mkdirSync(workspace, { mode: 0o700 });
    const places = [
      join('/var/tmp', `magi-attack-${process.pid}-d`, 'd.sock'),
      join(workspace, 'magid.sock'),
    ];
    t.teardown(() =>
      rmSync(join('/var/tmp', `magi-attack-${process.pid}-d`), { recursive: true, force: true }),
    );
    for (const [index, socket] of places.entries()) {
      const home = join(root, `magi-${index}`);
      mkdirSync(home, { mode: 0o700 });
      writeFileSync(join(home, 'config.json'), ENABLED);
      const provider = await ScriptedProvider.start(t);
      await startDaemon(t, {
        socket,
        home,
        args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
      });
      const { client } = await connectSocket(socket);
      t.teardown(() => client.close());
      await client.initialize([]);
      const { session, control } = await claimedSession(client, workspace);
      const [result] = await runCommands(t, { provider, client, session, control }, [
        `${PYTHON_CONNECT(socket)}; python3 -c 'print(1)'; node -e 'console.log(2)'`,
      ]);
      t.match(
        result!.output,
        /^refused (1|2)\n1\n2\n$/,
        `${socket}: not reachable; python3 and node still run`,
      );
    }
  },
);

t.test('one session’s six slow searches leave another session’s read_file unqueued', skip, async (t) => {
  const s = await scene(t);
  // A `c`, then random a and b to the largest file searched: `a[ab]{999}c` has a `c` to look for, and costs
  // RE2 time in proportion to the text times the pattern's size (seconds for each search).
  let text = 'c';
  while (text.length < WORKSPACE_TOOL_LIMITS.search_file_bytes_max) text += Math.random() < 0.5 ? 'a' : 'b';
  // Four of them, so that each search outlasts the other session's whole turn even on a loaded machine.
  for (let copy = 0; copy < 4; copy++) writeFileSync(join(s.workspace, `big-${copy}.txt`), text);
  writeFileSync(join(s.workspace, 'small.txt'), 'small\n');
  s.provider.replyToolCalls(
    Array.from({ length: 6 }, (_, index) => ({
      id: `s${index}`,
      name: 'search_files',
      arguments: JSON.stringify({ pattern: 'a[ab]{999}c', path: '.' }),
    })),
  );
  s.provider.reply(['searched']);
  await s.client.call(
    'turn.start',
    { prompt: 'search' },
    { session: s.session, control: s.control, operation: op() },
  );
  // The scripted answers go to requests in the order they arrive: the searches are the first session's
  // only once its request has arrived (on a loaded machine the other's could overtake it).
  await s.provider.nextRequest();
  // Another client, in another session: its events are its own.
  const { client: otherClient } = await connectSocket(s.socket);
  t.teardown(() => otherClient.close());
  await otherClient.initialize([]);
  const other = await claimedSession(otherClient, s.workspace);
  s.provider.replyToolCalls([
    { id: 'r', name: 'read_file', arguments: JSON.stringify({ path: 'small.txt' }) },
  ]);
  s.provider.reply(['read']);
  const started = Date.now();
  await otherClient.call(
    'turn.start',
    { prompt: 'read' },
    { session: other.session, control: other.control, operation: op() },
  );
  const terminal = await otherClient.event('turn.terminal', 60_000);
  t.match(terminal.payload, { status: 'completed' }, 'the other session’s read completes');
  t.comment(`the other session's read_file turn took ${Date.now() - started} ms`);
  t.notOk(
    s.client.pendingEvents.some((event) => event.event === 'turn.terminal'),
    'while the six searches of the first still run',
  );
  t.equal((await otherClient.call('status')).active_turns, 1);
});
