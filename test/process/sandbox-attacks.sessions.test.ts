import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { defaultSocketPath } from '../../core/endpoint/socket-path.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { sandboxUnavailable } from '../helpers/sandbox-machine.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { startDaemon } from './spawn-daemon.js';

// What one session's command could do to another session, and what a workspace that is the user's home
// shows the file tools: a workspace swapped for a link to the home under a session, and the home's own
// credential places searched, listed and read.
t.setTimeout(240_000);

const ENABLED = JSON.stringify({ tools: { enabled: ['run_command', 'write_file'] } });
const SECRET = (name: string) => `sk-attack-${name.replace(/[^a-z0-9]/gi, '-')}-secret`;

/** Credential places of a home that no capture rule names: only the home's own list hides them. */
const HOME_PLACES = [
  '.claude/.credentials.json',
  '.local/share/keyrings/login.keyring',
  '.m2/settings.xml',
  '.mozilla/firefox/x.default/cookies.sqlite',
  '.config/rclone/rclone.conf',
];

interface Scene {
  root: string;
  userHome: string;
  provider: ScriptedProvider;
  client: WireClient;
}

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

/** A daemon run as root, its user's home full of secrets, on a folder no emptied place covers. */
async function scene(t: Test): Promise<Scene> {
  const root = mkdtempSync('/var/lib/magi-attack-');
  chmodSync(root, 0o755);
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const userHome = join(root, 'user');
  const daemonHome = join(root, 'magi');
  const runtime = join(root, 'xdg');
  for (const place of HOME_PLACES) write(join(userHome, place), SECRET(place));
  write(join(userHome, 'notes.txt'), 'an ordinary note\n');
  mkdirSync(runtime, { mode: 0o700 });
  mkdirSync(daemonHome, { mode: 0o700 });
  writeFileSync(join(daemonHome, 'config.json'), ENABLED);
  const provider = await ScriptedProvider.start(t);
  const env = { HOME: userHome, XDG_RUNTIME_DIR: runtime };
  await startDaemon(t, {
    socket: null,
    home: daemonHome,
    args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
    env,
  });
  const { client } = await connectSocket(defaultSocketPath(daemonHome, env, userHome));
  t.teardown(() => client.close());
  await client.initialize([]);
  return { root, userHome, provider, client };
}

/** One turn of `session` making `calls`; each call's tool message, in order. */
async function turn(
  t: Test,
  s: Scene,
  session: { session: string; control: string },
  calls: Array<{ name: string; arguments: Record<string, unknown> }>,
): Promise<string[]> {
  s.provider.replyToolCalls(
    calls.map((call, index) => ({
      id: `c${index}`,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
    })),
  );
  s.provider.reply(['done']);
  const before = s.provider.requests.length;
  await s.client.call(
    'turn.start',
    { prompt: 'go' },
    { session: session.session, control: session.control, operation: op() },
  );
  const terminal = await s.client.event('turn.terminal', 120_000);
  t.match(terminal.payload, { status: 'completed' }, 'the turn completes');
  const messages = s.provider.requests[before + 1]!.body.messages as Array<{
    role: string;
    tool_call_id: string;
    content: string;
  }>;
  return calls.map((_, index) => messages.find((message) => message.tool_call_id === `c${index}`)!.content);
}

t.test(
  'a workspace swapped for a link to the home by another session’s command is refused to every tool',
  { skip: sandboxUnavailable ?? (process.getuid?.() === 0 ? false : 'needs root for /var/lib') },
  async (t) => {
    const s = await scene(t);
    const outer = join(s.root, 'x');
    const inner = join(outer, 'inner');
    write(join(inner, 'README.md'), 'the inner project\n');
    const a = await claimedSession(s.client, outer);
    const b = await claimedSession(s.client, inner);
    const [swap] = await turn(t, s, a, [
      {
        name: 'run_command',
        arguments: { command: `mv inner inner.old && ln -s "$HOME" inner && echo swapped` },
      },
    ]);
    t.match(swap, /swapped/, 'the command of the outer session swapped the inner workspace');

    const results = await turn(t, s, b, [
      { name: 'read_file', arguments: { path: 'notes.txt' } },
      { name: 'search_files', arguments: { pattern: 'ordinary|sk-attack' } },
      { name: 'list_directory', arguments: { path: '.' } },
      { name: 'write_file', arguments: { path: 'planted.txt', content: 'x' } },
      { name: 'run_command', arguments: { command: 'cat notes.txt; ls -A' } },
    ]);
    for (const [index, result] of results.entries()) {
      t.match(result, /workspace_changed/, `call ${index} is refused workspace_changed`);
      t.notMatch(result, /ordinary note|sk-attack/, 'nothing of the home is read');
    }
    t.throws(() => readFileSync(join(s.userHome, 'planted.txt')), 'nothing was written into the home');
  },
);

t.test(
  'with the user’s home as the workspace, the home’s credential places are hidden from every tool',
  { skip: sandboxUnavailable ?? (process.getuid?.() === 0 ? false : 'needs root for /var/lib') },
  async (t) => {
    const s = await scene(t);
    const session = await claimedSession(s.client, s.userHome);
    const [search, ...rest] = await turn(t, s, session, [
      { name: 'search_files', arguments: { pattern: 'sk-attack|ordinary' } },
      ...HOME_PLACES.map((path) => ({ name: 'read_file', arguments: { path } })),
      { name: 'list_directory', arguments: { path: '.m2' } },
      { name: 'list_directory', arguments: { path: '.config' } },
      { name: 'write_file', arguments: { path: '.m2/settings.xml', content: 'replaced' } },
      {
        name: 'run_command',
        arguments: { command: HOME_PLACES.map((path) => `cat '${path}' 2>/dev/null`).join('; ') },
      },
    ]);
    t.match(search, /notes\.txt/, 'the search sees the rest of the home');
    t.notMatch(search, /sk-attack/, 'but none of its credential places');
    const reads = rest.slice(0, HOME_PLACES.length);
    for (const [index, read] of reads.entries()) {
      t.match(read, /credential_path/, `${HOME_PLACES[index]} is refused`);
    }
    const [m2, config, written, command] = rest.slice(HOME_PLACES.length);
    t.notMatch(m2, /settings\.xml/, 'a listing leaves them out');
    t.notMatch(config, /rclone/);
    t.match(written, /credential_path/, 'nor can one be written');
    t.equal(readFileSync(join(s.userHome, '.m2/settings.xml'), 'utf8'), SECRET('.m2/settings.xml'));
    t.notMatch(command, /sk-attack/, 'a command reads them empty');
  },
);
