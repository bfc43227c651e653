import {
  closeSync,
  fdatasyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROFILE_LIMITS } from '../core/limits.js';
import { type ChildServer, startChildServer } from './child-server.js';
import { benchOptions } from './cli-options.js';
import { DirectLoop } from './direct-turn.js';
import { loadAverage } from './report.js';
import { percentile } from './stats.js';
import { startTracedChild, straceUnavailable } from './traced-child.js';
import { TurnConnection } from './turn-connection.js';
import type { ProviderSpent, TurnTiming } from './turn-fixture.js';
import {
  type Collected,
  describeRetention,
  integer,
  type Latency,
  micros,
  printResults,
  RAISED_RETENTION,
  type RunResult,
  SAMPLE_MS,
} from './turn-report.js';

/**
 * Turn bench: turns per second, each with one tool call, through the daemon and through a direct loop
 * that talks to the same instant provider itself, measured in the same run at each session count; the
 * daemon's overhead per turn (its wall time less the provider's and the executor's); its durable writes
 * per turn; and its resident memory with every session's turn in flight. Prints the daemon's share of
 * the direct loop's throughput beside the target. A measurement: it exits 0 whatever the ratio.
 */
const USAGE = `usage: node --import tsx bench/turn.ts [options]
  --seconds <n>        measured seconds per run (default 2)
  --warmup <n>         warm-up seconds before each measured window (default 1)
  --rounds <n>         rounds per session count, each a back-to-back direct and daemon run, alternating
                       which goes first; medians are reported, the ratio as the median of the rounds'
                       ratios (default 3)
  --sessions <list>    session counts, comma-separated, each 1 to ${PROFILE_LIMITS.calls}: the daemon runs at most
                       ${PROFILE_LIMITS.calls} application calls at once (default 1,32)
  --fsync-turns <n>    turns of a second daemon, run under strace, whose fsync and fdatasync calls are
                       counted; 0 skips it (default 200)
  --state-dir <dir>    where the daemons' throwaway homes (their SQLite history) are made (default the OS
                       temp directory): every turn waits for this file system's fsync
  --profile-dir <dir>  run the daemon child with --cpu-prof, writing its profile there

provider: a child (bench/turn-provider.ts), a node:http chat completions server on loopback that answers
  at once: a \`lookup {"path":"a"}\` call to a request without a tool message, a short text to one
  whose last message is the tool's. It times its own work on every request.
direct: the baseline, in this process, one loop per session: POST with fetch, parse the event stream,
  run the tool, POST the continuation, read the answer.
daemon: one child for the whole bench, as bench/wire.ts runs its daemon (bench/turn-daemon.ts): the real
  app built with buildApp, which is what \`magid serve\` runs, less its socket locks and its log, on a
  throwaway home. Each run opens one Unix socket connection per session, which initializes with
  application_resources_v1, creates and claims its own session, creates and confirms its own executor,
  registers the tool inline and lists the registry, then runs turns with turn.start, answering each
  turn.application_tool_call at once, until turn.terminal; afterwards it clears and releases them.
overhead: a turn's wall time less the provider's time on its two requests and the tool's time in the
  client: for the direct loop fetch and the loopback, for the daemon everything it adds on top. With
  more than one session it includes the turns' waiting for each other.`;

const STALL_MS = 10_000;
const FSYNC_PROBES = 50;
const FSYNC_WARMUP_TURNS = 10;
const TRACED_SYSCALLS = ['fsync', 'fdatasync'] as const;
/** turn.start and turn.application_tool_result: the operations one turn with one call retains. */

const { values, usageError, numberOption } = benchOptions(USAGE, {
  seconds: { type: 'string', default: '2' },
  warmup: { type: 'string', default: '1' },
  rounds: { type: 'string', default: '3' },
  sessions: { type: 'string', default: '1,32' },
  'fsync-turns': { type: 'string', default: '200' },
  'state-dir': { type: 'string' },
  'profile-dir': { type: 'string' },
} as const);
const measureMs = numberOption('seconds', values.seconds, {}) * 1_000;
const warmupMs = numberOption('warmup', values.warmup, { zero: true }) * 1_000;
const rounds = numberOption('rounds', values.rounds, { integer: true });
const fsyncTurns = numberOption('fsync-turns', values['fsync-turns'], { integer: true, zero: true });
const sessionCounts = [
  ...new Set(
    values.sessions.split(',').map((text) => numberOption('sessions', text.trim(), { integer: true })),
  ),
].sort((a, b) => a - b);
if (sessionCounts.some((count) => count > PROFILE_LIMITS.calls)) {
  usageError(`--sessions values must be at most ${PROFILE_LIMITS.calls}`);
}
const stateDir = values['state-dir'] ?? tmpdir();
const profileDir = values['profile-dir'];

type Subject = 'direct' | 'daemon';

const servers: ChildServer[] = [];
let scratch: string | null = null;

function latencyOf(sortedNs: Float64Array): Latency {
  return { p50Micros: percentile(sortedNs, 0.5) / 1_000, p99Micros: percentile(sortedNs, 0.99) / 1_000 };
}

/** fdatasync of a 4 KiB append in `directory`, the cost a durable commit there starts from. */
function probeFsync(directory: string): Latency {
  const probeDir = mkdtempSync(join(directory, 'magid-bench-fsync-'));
  const fd = openSync(join(probeDir, 'probe'), 'w');
  const block = Buffer.alloc(4_096, 0x61);
  const times = new Float64Array(FSYNC_PROBES);
  try {
    for (let probe = 0; probe < FSYNC_PROBES; probe++) {
      writeSync(fd, block);
      const start = process.hrtime.bigint();
      fdatasyncSync(fd);
      times[probe] = Number(process.hrtime.bigint() - start);
    }
  } finally {
    closeSync(fd);
    rmSync(probeDir, { recursive: true, force: true });
  }
  return latencyOf(times.sort());
}

function vmRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1_024;
}

interface Provider {
  url: string;
  /** What the provider spent since the last call, which it then forgets. */
  spent(): Promise<{ connections: number; turns: Map<string, ProviderSpent> }>;
}

async function startProvider(): Promise<Provider & { pid: number }> {
  const child = await startChildServer('./turn-provider.ts');
  servers.push(child);
  const url = child.socketPath;
  const timesUrl = `${url.replace(/\/v1$/, '')}/bench/times`;
  return {
    url,
    pid: child.pid,
    async spent() {
      const response = await fetch(timesUrl);
      const body = (await response.json()) as {
        connections: number;
        turns: Array<[string, number, number, number]>;
      };
      return {
        connections: body.connections,
        turns: new Map(body.turns.map(([tag, ns, bytes, requests]) => [tag, { ns, bytes, requests }])),
      };
    },
  };
}

/**
 * Runs `turners` side by side, each one turn after another, for the warm-up and the measured window;
 * returns the turns that ended inside the window, and how many ended in all. No turn starts after the window; the run ends when
 * the last one has. `sample` is called every SAMPLE_MS inside the window.
 */
async function measureWindow(
  turners: ReadonlyArray<(tag: string) => Promise<TurnTiming>>,
  label: string,
  sample?: () => void,
): Promise<{ measured: TurnTiming[]; total: number }> {
  const start = process.hrtime.bigint();
  const measureFrom = start + BigInt(Math.round(warmupMs * 1e6));
  const measureUntil = measureFrom + BigInt(Math.round(measureMs * 1e6));
  const measured: TurnTiming[] = [];
  let total = 0;
  let lastProgress = start;
  let stalled: (error: Error) => void = () => {};
  const stall = new Promise<never>((_resolve, reject) => (stalled = reject));
  const watchdog = setInterval(() => {
    const now = process.hrtime.bigint();
    if (sample && now >= measureFrom && now < measureUntil) sample();
    if (now - lastProgress > BigInt(STALL_MS) * 1_000_000n)
      stalled(new Error(`no turn ended for ${STALL_MS} ms`));
  }, SAMPLE_MS);
  const loops = turners.map(async (turn, worker) => {
    for (let n = 0; process.hrtime.bigint() < measureUntil; n++) {
      const timing = await turn(`${label}.${worker}.${n}`);
      lastProgress = timing.endedAt;
      total++;
      if (timing.endedAt >= measureFrom && timing.endedAt < measureUntil) measured.push(timing);
    }
  });
  try {
    await Promise.race([stall, Promise.all(loops)]);
  } finally {
    clearInterval(watchdog);
  }
  return { measured, total };
}

function summarizeRun(
  { measured, total }: { measured: readonly TurnTiming[]; total: number },
  sessions: number,
  provider: Awaited<ReturnType<Provider['spent']>>,
  rss: RunResult['rss'],
): RunResult {
  if (measured.length === 0) throw new Error('no turn ended inside the measured window');
  const overheads = new Float64Array(measured.length);
  let bytes = 0;
  measured.forEach((timing, index) => {
    const spent = provider.turns.get(timing.tag);
    if (spent?.requests !== 2) {
      throw new Error(`the provider saw ${spent?.requests ?? 0} request(s) of turn ${timing.tag}, not 2`);
    }
    overheads[index] = timing.wallNs - spent.ns - timing.executorNs;
    bytes += spent.bytes;
  });
  return {
    turnsPerSecond: measured.length / (measureMs / 1_000),
    overhead: latencyOf(overheads.sort()),
    providerBytesPerTurn: bytes / measured.length,
    providerConnections: provider.connections,
    turnsPerSession: total / sessions,
    rss,
  };
}

/** Opens one connection per session to the daemon and sets each up, one after another. */
async function daemonClients(socketPath: string, sessions: number, workspace: string) {
  const connections: TurnConnection[] = [];
  try {
    for (let index = 0; index < sessions; index++) {
      const connection = await TurnConnection.open(socketPath);
      connections.push(connection);
      // One at a time: a registration holds the daemon's one capture slot.
      await connection.setUp(workspace);
    }
  } catch (error) {
    for (const connection of connections) connection.close();
    throw error;
  }
  return connections;
}

interface Subjects {
  provider: Provider;
  daemon: ChildServer;
  workspace: string;
}

async function runSubject(
  subject: Subject,
  sessions: number,
  label: string,
  { provider, daemon, workspace }: Subjects,
): Promise<RunResult> {
  await provider.spent();
  if (subject === 'direct') {
    const loops = Array.from({ length: sessions }, () => new DirectLoop(provider.url));
    const window = await measureWindow(
      loops.map((loop) => (tag: string) => loop.turn(tag)),
      label,
    );
    return summarizeRun(window, sessions, await provider.spent(), null);
  }
  const connections = await daemonClients(daemon.socketPath, sessions, workspace);
  try {
    const setUp = vmRss(daemon.pid);
    let peak = 0;
    const window = await measureWindow(
      connections.map((connection) => (tag: string) => connection.turn(tag)),
      label,
      () => {
        peak = Math.max(peak, vmRss(daemon.pid));
      },
    );
    const result = summarizeRun(window, sessions, await provider.spent(), { peak, setUp });
    for (const connection of connections) await connection.tearDown();
    return result;
  } finally {
    for (const connection of connections) connection.close();
  }
}

async function measureSessions(sessions: number, subjects: Subjects, collected: Collected): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    // Alternating which subject goes first spreads any drift of the machine over both.
    const order: Subject[] = round % 2 === 0 ? ['direct', 'daemon'] : ['daemon', 'direct'];
    const pair: Partial<Record<Subject, RunResult>> = {};
    for (const subject of order) {
      pair[subject] = await runSubject(subject, sessions, `${subject}-${sessions}-${round}`, subjects);
      collected[subject].push(pair[subject]);
    }
    const ratio = pair.daemon!.turnsPerSecond / pair.direct!.turnsPerSecond;
    collected.ratios.push(ratio);
    console.log(
      `  ${sessions} session(s) round ${round + 1}: direct ${integer(pair.direct!.turnsPerSecond)} turns/s ` +
        `overhead ${micros(pair.direct!.overhead)} µs, daemon ${integer(pair.daemon!.turnsPerSecond)} turns/s ` +
        `overhead ${micros(pair.daemon!.overhead)} µs, ratio ${ratio.toFixed(2)}`,
    );
  }
}

/**
 * fsync and fdatasync calls per turn of a daemon child of its own, started under strace, counted over
 * `fsyncTurns` turns at each session count: the turns of concurrent sessions share group commits.
 */
async function measureDurableWrites(provider: Provider, workspace: string): Promise<string> {
  const unavailable = straceUnavailable();
  if (unavailable !== null) return `fsyncs: not measured (${unavailable})`;
  const traceFile = join(workspace, '..', 'fsync.trace');
  let daemon: Awaited<ReturnType<typeof startTracedChild>>;
  try {
    daemon = await startTracedChild('./turn-daemon.ts', TRACED_SYSCALLS, traceFile, daemonEnv(provider));
  } catch (error) {
    return `fsyncs: not measured (${error instanceof Error ? error.message : String(error)})`;
  }
  const figures: string[] = [];
  try {
    for (const sessions of sessionCounts) {
      const connections = await daemonClients(daemon.socketPath, sessions, workspace);
      try {
        const turnsEach = Math.max(1, Math.ceil(fsyncTurns / sessions));
        const run = (label: string, turns: number) =>
          Promise.all(
            connections.map(async (connection, worker) => {
              for (let n = 0; n < turns; n++) await connection.turn(`${label}.${sessions}.${worker}.${n}`);
            }),
          );
        await run('fsync-warmup', Math.max(1, Math.ceil(FSYNC_WARMUP_TURNS / sessions)));
        const before = daemon.calls();
        await run('fsync', turnsEach);
        const perTurn = (daemon.calls() - before) / (turnsEach * sessions);
        figures.push(`${sessions} session(s) ${perTurn.toFixed(2)}`);
        for (const connection of connections) await connection.tearDown();
      } finally {
        for (const connection of connections) connection.close();
      }
    }
  } finally {
    await daemon.stop();
  }
  return (
    `fsyncs per turn: ${figures.join(', ')} (${TRACED_SYSCALLS.join(' + ')} of the daemon and its threads ` +
    `under strace -f, over about ${fsyncTurns} turns at each session count after ${FSYNC_WARMUP_TURNS} uncounted)`
  );
}

function daemonEnv(provider: Provider): Record<string, string> {
  return {
    BENCH_PROVIDER_URL: provider.url,
    BENCH_STATE_DIR: stateDir,
    BENCH_RETAINED: String(RAISED_RETENTION),
  };
}

async function main(): Promise<void> {
  const provider = await startProvider();
  scratch = mkdtempSync(join(tmpdir(), 'magid-bench-turn-'));
  const workspace = join(scratch, 'workspace');
  mkdirSync(workspace);
  const fsync = probeFsync(stateDir);
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const daemon = await startChildServer('./turn-daemon.ts', { nodeFlags, env: daemonEnv(provider) });
  servers.push(daemon);

  console.log(
    `turns with one tool call each, against an instant chat completions provider on loopback; ` +
      `${rounds} round(s) of ${warmupMs / 1_000} s warm-up + ${measureMs / 1_000} s measured per subject and ` +
      `session count; sessions ${sessionCounts.join(', ')}`,
  );
  console.log(
    `daemon pid ${daemon.pid} (home under ${stateDir}: fdatasync of a 4 KiB append p50/p99 ${micros(fsync)} µs), ` +
      `provider pid ${provider.pid}, node ${process.version}, ${availableParallelism()} cpus, load average ${loadAverage()}\n`,
  );

  const subjects: Subjects = { provider, daemon, workspace };
  const results = new Map<number, Collected>();
  for (const sessions of sessionCounts) {
    const collected: Collected = { direct: [], daemon: [], ratios: [] };
    results.set(sessions, collected);
    await measureSessions(sessions, subjects, collected);
  }
  console.log(`\nmedians over ${rounds} round(s); load average now ${loadAverage()}\n`);
  printResults(results);
  if (fsyncTurns > 0) console.log(await measureDurableWrites(provider, workspace));
  console.log(describeRetention());
}

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
