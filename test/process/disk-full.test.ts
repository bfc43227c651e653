import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, rmSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connectSocket, type WireClient } from '../../client/wire-client.js';
import { claimedSession, op } from '../helpers/daemon.js';
import { stream } from '../helpers/provider-streams.js';
import { ScriptedProvider } from '../helpers/scripted-provider.js';
import { runMagid, shortTempDir, sleep, startDaemon } from './spawn-daemon.js';

// Two daemons start from the TypeScript sources, and turns run against a filling disk until enough happened.
t.setTimeout(180_000);

const HOME_BYTES = 16 * 1024 * 1024;
const SESSIONS = 6;
/**
 * The filling goes on until the disk was full this many times and this many turns completed meanwhile,
 * however long a loaded machine takes, up to FILL_MS_MAX.
 */
const FULL_TIMES = 8;
const COMPLETED_TURNS = 20;
const FILL_MS_MAX = 60_000;
/** Each answer takes room in the history, so that a few turns fill what the filler leaves. */
const ANSWER = 'A sentence of the answer. '.repeat(80);
const CHUNK = Buffer.alloc(4096, 0x61);

/** Why this machine cannot mount a small tmpfs as the home, or null when it can. */
function tmpfsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const probe = shortTempDir({ teardown: (fn) => void t.teardown(fn) });
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { encoding: 'utf8' });
  if (result.status !== 0) return `the kernel refused a tmpfs mount: ${result.stderr.trim() || result.error}`;
  spawnSync('umount', [probe]);
  return null;
}

/** A home on a tmpfs of HOME_BYTES, unmounted with the test. */
function smallHome(t: Test, root: string): string {
  const home = join(root, 'home');
  mkdirSync(home, { mode: 0o700 });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${HOME_BYTES},mode=0700`, 'tmpfs', home]);
  if (mounted.status !== 0) throw new Error('the tmpfs could not be mounted');
  t.teardown(() => void spawnSync('umount', ['-l', home]));
  return home;
}

/** Appends to `path` until the filesystem is full; returns whether it was (ENOSPC). */
function fillUp(path: string): boolean {
  for (;;) {
    try {
      appendFileSync(path, CHUNK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOSPC') return true;
      throw error;
    }
  }
}

interface Seen {
  session: string;
  turnId: string;
  status: string;
  code: string | null;
}

/**
 * Runs turns one after another in one session until `running()` is false, each terminal added to `seen`
 * as it comes; returns those of this session.
 */
async function turnLoop(
  client: WireClient,
  workspace: string,
  running: () => boolean,
  all: Seen[],
): Promise<Seen[]> {
  const seen: Seen[] = [];
  let session: { session: string; control: string } | null = null;
  while (running()) {
    session ??= await claimedSession(client, workspace).catch(() => null);
    if (!session) continue;
    const start = await client.request(
      'turn.start',
      { prompt: 'Write it down.' },
      { session: session.session, control: session.control, operation: op() },
    );
    if (!start.ok) continue;
    const turnId = (start.result as { turn_id: string }).turn_id;
    const terminal = await client.event('turn.terminal', 20_000);
    const payload = terminal.payload as { turn_id: string; status: string; error: { code: string } | null };
    if (payload.turn_id !== turnId) throw new Error('a terminal of another turn');
    const entry = {
      session: session.session,
      turnId,
      status: payload.status,
      code: payload.error?.code ?? null,
    };
    seen.push(entry);
    all.push(entry);
  }
  return seen;
}

/** A home on a small tmpfs, a socket path, a workspace and a scripted provider, with its daemon arguments. */
async function scene(t: Test) {
  const root = shortTempDir(t);
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const provider = await ScriptedProvider.start(t);
  return {
    home: smallHome(t, root),
    socket: join(root, 'd.sock'),
    workspace,
    provider,
    args: ['--provider-base-url', provider.baseUrl, '--model', 'scripted-model'],
  };
}

const unavailable = tmpfsUnavailable();

t.test(
  'with the home filesystem full during turns, every terminal a client saw is what a restart finds',
  { skip: unavailable ?? false },
  async (t) => {
    const { home, socket, workspace, provider, args } = await scene(t);
    for (let i = 0; i < 2_000; i++) provider.reply([ANSWER]);
    const first = await startDaemon(t, { socket, home, args });

    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        const { client } = await connectSocket(socket);
        await client.initialize([]);
        return client;
      }),
    );
    const filler = join(home, 'filler');
    let running = true;
    const progress: Seen[] = [];
    const loops = Promise.all(clients.map((client) => turnLoop(client, workspace, () => running, progress)));
    // The filler takes what is free, then keeps giving some back and taking it again, so that writes of
    // every kind (user records, calls, terminals, the WAL's growth) meet a full disk at some point.
    let fullTimes = 0;
    const completedSoFar = () => progress.filter((turn) => turn.status === 'completed').length;
    const until = Date.now() + FILL_MS_MAX;
    while ((fullTimes < FULL_TIMES || completedSoFar() < COMPLETED_TURNS) && Date.now() < until) {
      if (fillUp(filler)) fullTimes++;
      await sleep(200);
      truncateSync(filler, Math.max(0, statSync(filler).size - 128 * CHUNK.length));
      await sleep(100);
    }
    fillUp(filler);
    running = false;
    const seen = (await loops).flat();
    first.magid.child.kill('SIGKILL');
    await first.magid.waitExit();
    rmSync(filler);

    const completed = seen.filter((turn) => turn.status === 'completed');
    const failed = seen.filter((turn) => turn.status !== 'completed');
    t.comment(
      `${seen.length} terminals seen: ${completed.length} completed, ${failed.length} not (${[...new Set(failed.map((turn) => turn.code))].join(', ')}); disk full ${fullTimes} times`,
    );
    t.ok(fullTimes > 0, 'the disk was full');
    t.ok(completed.length > 0, 'turns completed meanwhile');

    await startDaemon(t, { socket, home, args });
    const { client } = await connectSocket(socket);
    await client.initialize([]);
    const recorded = new Map<string, { status: string; code: string | null }>();
    for (const session of new Set(seen.map((turn) => turn.session))) {
      let cursor: string | null = null;
      do {
        const page = await client.call('session.replay', { cursor, limit: 100 }, { session });
        for (const record of page.records as Array<{ kind: string; data: Record<string, unknown> | null }>) {
          if (record.kind !== 'turn.terminal' || !record.data) continue;
          const error = record.data.error as { code: string } | null;
          recorded.set(record.data.turn_id as string, {
            status: record.data.status as string,
            code: error?.code ?? null,
          });
        }
        cursor = page.next_cursor as string | null;
      } while (cursor !== null);
    }
    const mismatched = seen.filter((turn) => {
      const after = recorded.get(turn.turnId);
      return after?.status !== turn.status || after.code !== turn.code;
    });
    t.same(
      mismatched.map((turn) => ({ ...turn, after: recorded.get(turn.turnId) ?? null })),
      [],
      'every terminal seen is the one recorded',
    );
    client.close();
  },
);

t.test(
  'a start that cannot record the turns the last daemon left active says why and exits 1; with room it recovers',
  { skip: unavailable ?? false },
  async (t) => {
    const { home, socket, workspace, provider, args } = await scene(t);
    const hold = provider.hold();
    provider.script(stream([hold]));
    t.teardown(() => hold.release());
    const first = await startDaemon(t, { socket, home, args });
    const { client } = await connectSocket(socket);
    await client.initialize([]);
    const { session, control } = await claimedSession(client, workspace);
    await client.call('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    await hold.reached;
    first.magid.child.kill('SIGKILL');
    await first.magid.waitExit();
    const filler = join(home, 'filler');
    t.ok(fillUp(filler), 'the home is full');

    const refused = runMagid(t, ['serve', '--socket', socket, '--home', home, ...args]);
    t.same(await refused.waitExit(), { code: 1, signal: null }, 'the daemon does not serve');
    t.equal(
      refused.stderr,
      'magid: the history store cannot be written (SQLITE_FULL)\n',
      'and says why, once',
    );
    t.equal(refused.stdout, '', 'with no ready line');

    rmSync(filler);
    const second = await startDaemon(t, { socket, home, args });
    t.match(second.magid.stderr, /turns interrupted by the last stop were recorded as failed/);
  },
);

t.test(
  'a turn refused for a full disk says so (storage_full), status shows it, and both recover once room is made',
  { skip: unavailable ?? false },
  async (t) => {
    const { home, socket, workspace, provider, args } = await scene(t);
    for (let i = 0; i < 200; i++) provider.reply(['ok']);
    await startDaemon(t, { socket, home, args });
    const { client } = await connectSocket(socket);
    await client.initialize([]);
    const { session, control } = await claimedSession(client, workspace);
    const filler = join(home, 'filler');
    t.ok(fillUp(filler), 'the home is full');
    // Room left inside the store's own files may take a few turns more; a long prompt uses it up.
    const prompt = 'A line of the prompt that fills the history. '.repeat(600);
    let refusal: { code: string } | null = null;
    for (let attempt = 0; attempt < 100 && refusal === null; attempt++) {
      const start = await client.request('turn.start', { prompt }, { session, control, operation: op() });
      if (!start.ok) {
        refusal = start.error as { code: string };
        break;
      }
      await client.event('turn.terminal', 20_000);
    }
    t.match(refusal, { code: 'storage_full' }, 'the refusal names the full disk, not an internal error');
    t.match(await client.call('status'), { storage: { full: true } }, 'status shows it');

    rmSync(filler);
    const start = await client.request('turn.start', { prompt: 'go' }, { session, control, operation: op() });
    t.ok(start.ok, 'with room again a turn starts');
    await client.event('turn.terminal', 20_000);
    t.match(await client.call('status'), { storage: { full: false } }, 'and status says the disk has room');
    client.close();
  },
);
