import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { defaultSocketPath } from '../../core/endpoint/socket-path.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { sandboxUnavailable } from '../helpers/sandbox-machine.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { startDaemon } from './spawn-daemon.js';
import { chownTree, startUnprivilegedStdio, unprivilegedUnavailable } from './unprivileged-daemon.js';

// What a hostile command could reach of the kernel and the machine beyond the filesystem: its settings, its
// name, its keyring, datagram and vsock sockets, the system's secrets and the other sessions' workspaces.
// Every attack runs against a daemon started as root, as containers and CI run it, and against one started
// as an unprivileged user. No attack ever writes anything it could reach: a setting is only opened for
// writing, and the test fails if that succeeds.
t.setTimeout(240_000);

const ENABLED = JSON.stringify({ tools: { enabled: ['run_command'] } });

interface Scene {
  root: string;
  provider: ScriptedProvider;
  client: WireClient;
  /** Sessions by name: `a` runs the attacks; `b` lies apart from it, `outer` holds it. */
  sessions: Record<'a' | 'b' | 'outer', { session: string; control: string }>;
  workspaces: Record<'a' | 'b' | 'outer', string>;
  dgram: DatagramListener;
}

/** A Unix datagram socket outside every workspace, like /dev/log, that counts what reaches it. */
interface DatagramListener {
  path: string;
  received(): Promise<number>;
}

async function datagramListener(t: Test, directory: string): Promise<DatagramListener> {
  const path = join(directory, 'log.sock');
  // Node has no Unix datagram sockets: the system's python3 listens.
  const child: ChildProcess = spawn(
    '/usr/bin/python3',
    [
      '-c',
      `import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
import os; os.chmod(sys.argv[1], 0o777)
print("ready", flush=True)
s.setblocking(False)
count = 0
sys.stdin.read()
try:
    while True:
        s.recv(4096); count += 1
except BlockingIOError:
    pass
print(count, flush=True)`,
      path,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  t.teardown(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (text: string) => {
    output += text;
  });
  const lines = () => output.split('\n').filter(Boolean);
  await new Promise<void>((resolve) => {
    const check = () => (lines()[0] === 'ready' ? resolve() : setImmediate(check));
    check();
  });
  return {
    path,
    received: async () => {
      const closed = new Promise((resolve) => child.once('close', resolve));
      child.stdin!.end();
      await closed;
      return Number(lines()[1]);
    },
  };
}

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/**
 * A folder on the root filesystem that no emptied place (temporary and runtime folders, the user's home)
 * covers, so that what a command sees of it is the sandbox's doing alone.
 */
function visibleRoot(t: Test): string {
  const root = mkdtempSync('/var/lib/magi-attack-');
  chmodSync(root, 0o755);
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  return root;
}

async function scene(t: Test, as: 'root' | 'nobody'): Promise<Scene> {
  const root = visibleRoot(t);
  const userHome = join(root, 'user');
  const daemonHome = join(root, 'magi');
  const runtime = join(root, 'xdg');
  const outer = join(root, 'projects');
  const workspaces = { a: join(outer, 'a'), b: join(root, 'elsewhere', 'b'), outer };
  write(join(workspaces.a, 'README.md'), 'a project\n');
  write(join(workspaces.b, '.env'), 'sk-attack-other-session-env\n');
  write(join(workspaces.b, 'notes.txt'), 'sk-attack-other-session-notes\n');
  write(join(outer, 'package.json'), '{"name":"sk-attack-outer-session"}\n');
  mkdirSync(userHome, { recursive: true });
  mkdirSync(runtime, { mode: 0o700 });
  mkdirSync(daemonHome, { mode: 0o700 });
  writeFileSync(join(daemonHome, 'config.json'), ENABLED);
  const provider = await ScriptedProvider.start(t);
  const args = ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'];
  const env = { HOME: userHome, XDG_RUNTIME_DIR: runtime };
  let client: WireClient;
  if (as === 'root') {
    await startDaemon(t, { socket: null, home: daemonHome, args, env });
    ({ client } = await connectSocket(defaultSocketPath(daemonHome, env, userHome)));
    t.teardown(() => client.close());
  } else {
    chownTree(root);
    ({ client } = await startUnprivilegedStdio(t, { home: daemonHome, args, env }));
  }
  await client.initialize([]);
  const sessions = {
    a: await claimedSession(client, workspaces.a),
    b: await claimedSession(client, workspaces.b),
    outer: await claimedSession(client, workspaces.outer),
  };
  const dgramPlace = join(root, 'services');
  mkdirSync(dgramPlace, { mode: 0o755 });
  return { root, provider, client, sessions, workspaces, dgram: await datagramListener(t, dgramPlace) };
}

/** One turn of session `a` running `commands`; each command's output, in order. */
async function attack(t: Test, s: Scene, commands: readonly string[]): Promise<string[]> {
  s.provider.replyToolCalls(
    commands.map((command, index) => ({
      id: `k${index}`,
      name: 'run_command',
      arguments: JSON.stringify({ command, timeout_ms: 60_000 }),
    })),
  );
  s.provider.reply(['done']);
  const before = s.provider.requests.length;
  const { session, control } = s.sessions.a;
  await s.client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
  const terminal = await s.client.event('turn.terminal', 180_000);
  t.match(terminal.payload, { status: 'completed' }, 'the turn completes');
  const messages = s.provider.requests[before + 1]!.body.messages as Array<{
    role: string;
    tool_call_id: string;
    content: string;
  }>;
  return commands.map((_, index) => {
    const message = messages.find((candidate) => candidate.tool_call_id === `k${index}`)!;
    return (JSON.parse(message.content) as { output: string }).output;
  });
}

const python = (script: string) => `/usr/bin/python3 -c '${script.replaceAll("'", "'\\''")}'`;

const SETTINGS = [
  '/proc/sys/kernel/core_pattern',
  '/proc/sys/kernel/hostname',
  '/proc/sys/kernel/modprobe',
  '/proc/sys/vm/overcommit_memory',
  '/proc/sys/fs/binfmt_misc/register',
  '/proc/sysrq-trigger',
  '/sys/kernel/uevent_helper',
  '/sys/fs/cgroup/memory/memory.limit_in_bytes',
];

const OPEN_SETTINGS = python(`import errno, os
for path in ${JSON.stringify(SETTINGS)}:
    try:
        os.close(os.open(path, os.O_WRONLY))
        print(path, "WRITABLE")
    except OSError as error:
        print(path, errno.errorcode[error.errno])
print("read-only:", *[f"{path} {os.statvfs(path).f_flag & os.ST_RDONLY}" for path in ["/proc/sys", "/proc/sys/kernel", "/sys"]])`);

const KEYRING = python(`import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw(name, number, *args):
    result = libc.syscall(ctypes.c_long(number), *args)
    print(name, "ok" if result >= 0 else errno.errorcode[ctypes.get_errno()])
# KEYCTL_SEARCH in the user keyring (-4), add_key into it, request_key
raw("keyctl", 250, ctypes.c_long(10), ctypes.c_long(-4), ctypes.c_char_p(b"user"), ctypes.c_char_p(b"magi"), ctypes.c_long(0))
raw("add_key", 248, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"magi"), ctypes.c_char_p(b"x"), ctypes.c_long(1), ctypes.c_long(-4))
raw("request_key", 249, ctypes.c_char_p(b"user"), ctypes.c_char_p(b"magi"), ctypes.c_long(0), ctypes.c_long(0))`);

const SOCKETS = (dgram: string) =>
  python(`import errno, socket
def attempt(name, act):
    try:
        act()
        print(name, "ok")
    except OSError as error:
        print(name, errno.errorcode[error.errno])
def send_pair():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"x", ${JSON.stringify(dgram)})
def send_socket():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(b"x", ${JSON.stringify(dgram)})
attempt("dgram-pair", send_pair)
attempt("dgram-socket", send_socket)
attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM).bind((0xFFFFFFFF, 1234)))
attempt("packet", lambda: socket.socket(17, socket.SOCK_RAW))`);

for (const as of ['root', 'nobody'] as const) {
  const unavailable = sandboxUnavailable ?? unprivilegedUnavailable();
  t.test(`a command of a daemon run as ${as}`, { skip: unavailable ?? false }, async (t) => {
    const s = await scene(t, as);
    const hostName = hostname();
    const hostShadow = readFileSync('/etc/shadow', 'utf8');
    const [settings, name, secrets, keyring, sockets, others] = await attack(t, s, [
      OPEN_SETTINGS,
      'hostname magi-attacked; echo "status $?"; hostname',
      'wc -c < /etc/shadow; wc -c < /etc/gshadow; cat /etc/ssh/ssh_host_*_key 2>/dev/null | wc -c; wc -c < /proc/keys; ls /proc/acpi /sys/firmware 2>/dev/null | grep -v : | grep -c .',
      KEYRING,
      SOCKETS(s.dgram.path),
      `cat ${s.workspaces.b}/.env ${s.workspaces.b}/notes.txt ../package.json 2>/dev/null; ls -A ${s.workspaces.b} | wc -l; ls -A ..; cat README.md`,
    ]);

    for (const line of settings!.trim().split('\n')) {
      t.notMatch(line, /WRITABLE/, `cannot be opened for writing: ${line}`);
    }
    t.match(
      settings,
      /read-only: \/proc\/sys 1 \/proc\/sys\/kernel 1 \/sys 1\n/,
      'the kernel’s settings are read-only',
    );
    t.equal(hostname(), hostName, 'the machine keeps its name');
    t.match(name, /status 1\n/, 'sethostname is refused');
    t.match(
      secrets,
      /^0\n0\n0\n0\n0\n$/,
      'shadow, gshadow, host keys, /proc/keys, /proc/acpi and /sys/firmware are empty',
    );
    t.ok(hostShadow.length > 0, 'the host has a shadow file to hide');
    t.same(keyring!.trim().split('\n'), ['keyctl EPERM', 'add_key EPERM', 'request_key EPERM'], 'no keyring');
    t.same(
      sockets!.trim().split('\n'),
      ['dgram-pair EPERM', 'dgram-socket EPERM', 'vsock EPERM', 'packet EPERM'],
      'no datagram Unix socket, no vsock, no packet socket',
    );
    t.equal(await s.dgram.received(), 0, 'nothing reached the datagram listener');
    t.notMatch(others, /sk-attack-/, 'no other session’s files are read');
    t.match(
      others,
      /^0\na\na project\n$/,
      'the apart workspace is empty; the one holding this one shows this one alone',
    );
  });
}

t.test('the host’s own name and settings are untouched by the attacks above', async (t) => {
  const pattern = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
  t.notMatch(pattern, /magi|\.sh/, 'core_pattern names no script of a test');
  t.notMatch(execFileSync('hostname', { encoding: 'utf8' }), /magi-attacked/);
});
