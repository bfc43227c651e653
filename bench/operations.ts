import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPERATION_LIMITS, OPERATION_RETENTION_MS, PROFILE_LIMITS } from '../core/limits.js';
import { type ChildServer, startChildServer } from './child-server.js';
import { benchOptions } from './cli-options.js';
import { BenchClient, Refused, RotatingClient, SessionActor, Tally } from './operations-actors.js';
import {
  mebibytes,
  printSummary,
  type Retention,
  refusals,
  turnsOf,
  WINDOW_HEADER,
  type Window,
  windowRow,
} from './operations-report.js';
import { loadAverage } from './report.js';

/**
 * Operations bench: sustains a mutation rate against a daemon with every bound as built, for long enough
 * that outcomes expire as fast as they are retained (the default 15 minutes is past the 600 s retention),
 * with mixed turns and the recoveries of section 6 of the protocol going on. Reports, window by window,
 * the mutations and turns per second, what the daemon retains against its bounds (its `status`) and its
 * resident memory; at the end, each figure against its first window's and the refusals of the recovery
 * methods, which must be none; and what one retained outcome costs in the heap against what its lookup
 * returns. A measurement: it exits 1 only when a recovery method was refused or a turn went wrong.
 */
const USAGE = `usage: node --import tsx bench/operations.ts [options]
  --seconds <n>        how long the load is sustained (default 900: past the ${OPERATION_RETENTION_MS / 1_000} s retention, so
                       that outcomes expire as fast as they come)
  --short              the short form: 60 seconds, in windows of 10 s
  --window <n>         seconds per reported window (default 60)
  --rate <n>           mutations per second in all (default 200); what the turns and the recoveries do not
                       send is made up with executor rotations, each retained like any outcome
  --turn-rate <n>      plain and built-in tool turns per second, on ordinary connections (default 10)
  --app-turn-rate <n>  application tool turns per second, on profile connections; each keeps 600 s of
                       evidence, of which the daemon keeps ${PROFILE_LIMITS.evidence_turns} turns (default 0.3)
  --sessions <n>       ordinary connections, each controlling its session (default 16)
  --applications <n>   profile connections, each with its session, executor and tool (default 2)
  --recover-every <n>  seconds between two recoveries, each on the next session in turn: a stopped slow
                       turn, a dropped connection then a resume and a claim, a release or a close then a
                       claim, an executor released and replaced (default 1)
  --state-dir <dir>    where the daemon's throwaway home is made (default the OS temp directory)

provider: a child (bench/operations-provider.ts) that answers at once: a text, a call of list_directory
  (a built-in tool), a call of the application's lookup, or, for a slow turn, a first delta and then
  nothing until the turn is stopped.
daemon: a child (bench/operations-daemon.ts), the real app as \`magid serve\` runs it, every bound as built.
rotations: each on one of enough connections that none passes ${Math.round((OPERATION_LIMITS.connection_operations / OPERATION_RETENTION_MS) * 1_000 * 0.75)} mutations a second, three quarters
  of what its share of the table carries.`;

const SAMPLE_MS = 1_000;
const PACE_MS = 50;
/** What one rotating connection sends at most, well inside what its share of the table carries. */
const ROTATIONS_PER_CONNECTION =
  (OPERATION_LIMITS.connection_operations / OPERATION_RETENTION_MS) * 1_000 * 0.75;
/** Rotations one connection may have unanswered; past it the bench is behind the rate, and says so. */
const ROTATIONS_IN_FLIGHT = 64;
const RECOVERIES = [
  'stoppedTurn',
  'reconnect',
  'releaseAndClaim',
  'closeAndClaim',
  'replaceExecutor',
] as const;

const { values, numberOption } = benchOptions(USAGE, {
  seconds: { type: 'string', default: '900' },
  short: { type: 'boolean', default: false },
  window: { type: 'string', default: '60' },
  rate: { type: 'string', default: '200' },
  'turn-rate': { type: 'string', default: '10' },
  'app-turn-rate': { type: 'string', default: '0.3' },
  sessions: { type: 'string', default: '16' },
  applications: { type: 'string', default: '2' },
  'recover-every': { type: 'string', default: '1' },
  'state-dir': { type: 'string' },
} as const);
const seconds = values.short ? 60 : numberOption('seconds', values.seconds, {});
const windowSeconds = values.short ? 10 : numberOption('window', values.window, {});
const rate = numberOption('rate', values.rate, {});
const turnRate = numberOption('turn-rate', values['turn-rate'], { zero: true });
const appTurnRate = numberOption('app-turn-rate', values['app-turn-rate'], { zero: true });
const sessionCount = numberOption('sessions', values.sessions, { integer: true });
const applicationCount = numberOption('applications', values.applications, { integer: true });
const recoverEveryMs = numberOption('recover-every', values['recover-every'], {}) * 1_000;
const stateDir = values['state-dir'] ?? tmpdir();

const servers: ChildServer[] = [];
const closers: Array<() => void> = [];
let scratch: string | null = null;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function vmRss(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1_024;
}

/** Runs `step` every `everyMs` on the schedule's own clock (never drifting), until `until`. */
async function paced(everyMs: number, until: number, step: (index: number) => Promise<void>): Promise<void> {
  const start = performance.now();
  for (let index = 0; performance.now() < until; index++) {
    await step(index);
    const next = start + (index + 1) * everyMs;
    if (next > performance.now()) await sleep(Math.min(next, until) - performance.now());
  }
}

/** The entry cost measurement, in a child with --expose-gc. */
function entryCost(): Array<{ kind: string; heap: number; charged: number | null; lookup: number }> {
  const script = fileURLToPath(new URL('./operation-entry-cost.ts', import.meta.url));
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', script], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`the entry cost measurement failed: ${child.stderr}`);
  return (JSON.parse(child.stdout) as { kinds: ReturnType<typeof entryCost> }).kinds;
}

async function main(): Promise<void> {
  scratch = mkdtempSync(join(tmpdir(), 'magid-bench-operations-'));
  const workspace = join(scratch, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.md'), '# Notes\n');
  const provider = await startChildServer('./operations-provider.ts');
  servers.push(provider);
  const daemon = await startChildServer('./operations-daemon.ts', {
    env: { BENCH_PROVIDER_URL: provider.socketPath, BENCH_STATE_DIR: stateDir },
  });
  servers.push(daemon);
  const tally = new Tally();

  const sessions = Array.from(
    { length: sessionCount },
    () => new SessionActor(daemon.socketPath, tally, false),
  );
  const applications = Array.from(
    { length: applicationCount },
    () => new SessionActor(daemon.socketPath, tally, true),
  );
  for (const actor of [...sessions, ...applications]) {
    closers.push(() => actor.close());
    await actor.open(workspace);
  }
  const rotating = await Promise.all(
    Array.from({ length: Math.max(1, Math.ceil(rate / ROTATIONS_PER_CONNECTION)) }, () =>
      RotatingClient.open(daemon.socketPath, tally),
    ),
  );
  for (const client of rotating) closers.push(() => client.close());
  const monitor = await BenchClient.open(daemon.socketPath, tally, false);
  closers.push(() => monitor.close());
  const setUpRss = vmRss(daemon.pid);

  console.log(
    `${rate} mutations/s for ${seconds} s: ${turnRate} plain and built-in tool turns/s on ${sessionCount} ` +
      `ordinary connections, ${appTurnRate} application tool turns/s on ${applicationCount} profile connections, ` +
      `a recovery every ${recoverEveryMs / 1_000} s, the rest executor rotations on ${rotating.length} connections`,
  );
  console.log(
    `daemon pid ${daemon.pid} (home under ${stateDir}), provider pid ${provider.pid}, node ${process.version}, ` +
      `${availableParallelism()} cpus, load average ${loadAverage()}; daemon RSS after set-up ${mebibytes(setUpRss)} MiB\n`,
  );

  const start = performance.now();
  const until = start + seconds * 1_000;
  const mutationsBefore = tally.mutations;
  let behind = 0;
  const loops: Array<Promise<void>> = [];
  /** A step that went wrong is tallied (a refusal is counted by its method already) and the loop goes on. */
  const attempt = (what: string, step: Promise<void>) =>
    step.catch((error: unknown) => {
      if (!(error instanceof Refused)) tally.failed(`${what}: ${(error as Error).message}`);
    });
  const guarded = (what: string, loop: Promise<void>) =>
    loops.push(loop.catch((error: unknown) => tally.failed(`${what}: ${(error as Error).message}`)));

  const turnsEachMs = turnRate > 0 ? (sessionCount / turnRate) * 1_000 : 0;
  if (turnsEachMs > 0) {
    sessions.forEach((actor, index) => {
      guarded(
        'turns',
        paced(turnsEachMs, until, (n) => {
          const kind = (n + index) % 2 === 0 ? 'plain' : 'builtin';
          return attempt(
            `a ${kind} turn`,
            actor.exclusive(() => actor.turn(kind)),
          );
        }),
      );
    });
  }
  const appTurnsEachMs = appTurnRate > 0 ? (applicationCount / appTurnRate) * 1_000 : 0;
  if (appTurnsEachMs > 0) {
    for (const actor of applications) {
      guarded(
        'application turns',
        paced(appTurnsEachMs, until, () =>
          attempt(
            'an application turn',
            actor.exclusive(() => actor.turn('app')),
          ),
        ),
      );
    }
  }
  const everyone = [...sessions, ...applications];
  guarded(
    'recoveries',
    paced(recoverEveryMs, until, (n) => {
      const actor = everyone[n % everyone.length]!;
      // Each round over the sessions shifts the recoveries by one, so that each session meets each one.
      const recovery = RECOVERIES[(n + Math.floor(n / everyone.length)) % RECOVERIES.length]!;
      // A recovery runs beside the other sessions' turns, never beside its own session's.
      void attempt(
        recovery,
        actor.exclusive(() => actor[recovery]()),
      );
      return Promise.resolve();
    }),
  );
  guarded(
    'rotations',
    paced(PACE_MS, until, async () => {
      const due =
        Math.floor((rate * (performance.now() - start)) / 1_000) - (tally.mutations - mutationsBefore);
      for (let sent = 0; sent < due; sent++) {
        const client = rotating[sent % rotating.length]!;
        if (client.unanswered >= ROTATIONS_IN_FLIGHT) {
          behind += due - sent;
          break;
        }
        client.rotate();
      }
    }),
  );

  const windows: Window[] = [];
  let previous = { at: start, mutations: mutationsBefore, turns: 0, stopped: 0, recovery: 0, other: 0 };
  const saturatedSeen = new Set<string>();
  let peakRss = setUpRss;
  let nextWindow = start + windowSeconds * 1_000;
  console.log(WINDOW_HEADER.join(' | '));
  while (performance.now() < until) {
    await sleep(Math.min(SAMPLE_MS, until - performance.now()));
    const retention = (await monitor.read('status')).retention as unknown as Retention;
    for (const [name, bound] of Object.entries(retention)) {
      if (typeof bound === 'object' && bound.saturated) saturatedSeen.add(name);
    }
    const rss = vmRss(daemon.pid);
    peakRss = Math.max(peakRss, rss);
    const now = performance.now();
    if (now < nextWindow && now < until) continue;
    nextWindow += windowSeconds * 1_000;
    const current = {
      at: now,
      mutations: tally.mutations,
      turns: turnsOf(tally),
      stopped: tally.turns.get('stopped') ?? 0,
      recovery: refusals(tally, true),
      other: refusals(tally, false),
    };
    const window: Window = {
      end: (now - start) / 1_000,
      mutations: (current.mutations - previous.mutations) / ((now - previous.at) / 1_000),
      turns: (current.turns - previous.turns) / ((now - previous.at) / 1_000),
      stopped: current.stopped - previous.stopped,
      retention,
      rssBytes: rss,
      recoveryRefusals: current.recovery - previous.recovery,
      otherRefusals: current.other - previous.other,
      saturated: Object.entries(retention)
        .filter(([, bound]) => typeof bound === 'object' && bound.saturated)
        .map(([name]) => name),
    };
    windows.push(window);
    previous = current;
    console.log(windowRow(window));
  }
  await Promise.all(loops);
  const elapsedMs = performance.now() - start;
  // Rotations still unanswered are let in before the figures are taken.
  while (rotating.some((client) => client.unanswered > 0)) await sleep(PACE_MS);

  const recoveryRefused = printSummary({
    windows,
    windowSeconds,
    tally,
    rate,
    sent: tally.mutations - mutationsBefore,
    elapsedMs,
    behind,
    setUpRss,
    peakRss,
    saturatedSeen,
    costs: entryCost(),
  });
  if (recoveryRefused > 0 || tally.failures.length > 0) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  for (const close of closers) close();
  await Promise.all(servers.map((server) => server.stop()));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
