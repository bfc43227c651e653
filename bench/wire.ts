import { availableParallelism } from 'node:os';
import { BenchConnection } from './bench-connection.js';
import { type ChildServer, startChildServer } from './child-server.js';
import { benchOptions } from './cli-options.js';
import { loadAverage, printTable } from './report.js';
import { median, medianSummary, type Summary, summarize } from './stats.js';

/**
 * Wire bench: round-trip throughput and p50/p99 latency of `capabilities` over the Unix socket,
 * pipelined and ping-pong, against the daemon and against a raw NDJSON echo server measured in the
 * same run with the same client, frames and durations. Prints the daemon's share of the raw
 * throughput beside the target. A measurement: it exits 0 whatever the ratio.
 */
const USAGE = `usage: node --import tsx bench/wire.ts [options]
  --seconds <n>       measured seconds per run (default 3)
  --warmup <n>        warm-up seconds before each measured window (default 1)
  --rounds <n>        rounds per mode, each a back-to-back raw and daemon run, alternating which goes
                      first; medians are reported, the ratio as the median of the rounds' ratios (default 3)
  --in-flight <n>     requests outstanding in the pipelined mode (default 64)
  --mode <name>       pipelined, ping-pong or both (default both)
  --profile-dir <dir> run both server children with --cpu-prof, writing their profiles there
                      (each file name carries the pid printed at the start)`;

const TARGETS = { pipelined: 0.5, 'ping-pong': 0.6 } as const;
type Mode = keyof typeof TARGETS;

const { values, usageError, numberOption } = benchOptions(USAGE, {
  seconds: { type: 'string', default: '3' },
  warmup: { type: 'string', default: '1' },
  rounds: { type: 'string', default: '3' },
  'in-flight': { type: 'string', default: '64' },
  mode: { type: 'string', default: 'both' },
  'profile-dir': { type: 'string' },
} as const);
const measureMs = numberOption('seconds', values.seconds, {}) * 1_000;
const warmupMs = numberOption('warmup', values.warmup, { zero: true }) * 1_000;
const rounds = numberOption('rounds', values.rounds, { integer: true });
const inFlight = numberOption('in-flight', values['in-flight'], { integer: true });
const profileDir = values['profile-dir'];
const modes = values.mode === 'both' ? (Object.keys(TARGETS) as Mode[]) : [values.mode as Mode];
if (!modes.every((mode) => mode in TARGETS)) usageError('--mode must be pipelined, ping-pong or both');

interface Target {
  name: 'raw' | 'daemon';
  connection: BenchConnection;
}

const servers: ChildServer[] = [];
const connections: BenchConnection[] = [];

const integer = (value: number) => Math.round(value).toString();
const micros = (summary: Summary) => `${integer(summary.p50Micros)}/${integer(summary.p99Micros)}`;

/** The medians of one mode; the ratio is the median of the rounds' ratios, each of a back-to-back pair. */
interface ModeResult {
  raw: Summary;
  daemon: Summary;
  ratio: number;
}

function printResults(results: Map<Mode, ModeResult>): void {
  const header = ['mode', 'raw req/s', 'daemon req/s', 'ratio', 'raw p50/p99 µs', 'daemon p50/p99 µs'];
  const rows = [...results].map(([mode, { raw, daemon, ratio }]) => [
    mode,
    integer(raw.requestsPerSecond),
    integer(daemon.requestsPerSecond),
    ratio.toFixed(2),
    micros(raw),
    micros(daemon),
  ]);
  printTable(header, rows);
  console.log('');
  for (const [mode, { ratio }] of results) {
    const verdict = ratio >= TARGETS[mode] ? 'PASS' : 'BELOW';
    console.log(`${mode}: ${ratio.toFixed(2)} of raw (target ${TARGETS[mode].toFixed(2)}) ${verdict}`);
  }
}

async function measureMode(mode: Mode, targets: readonly Target[]): Promise<ModeResult> {
  const collected: Record<Target['name'], Summary[]> = { raw: [], daemon: [] };
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternating which server goes first spreads any drift of the machine over both.
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    const pair: Partial<Record<Target['name'], Summary>> = {};
    for (const target of order) {
      const sample = await target.connection.run({
        inFlight: mode === 'pipelined' ? inFlight : 1,
        warmupMs,
        measureMs,
      });
      pair[target.name] = summarize(sample.latenciesNs, sample.seconds);
      collected[target.name].push(pair[target.name]!);
    }
    const ratio = pair.daemon!.requestsPerSecond / pair.raw!.requestsPerSecond;
    ratios.push(ratio);
    console.log(
      `  ${mode} round ${round + 1}: raw ${integer(pair.raw!.requestsPerSecond)} req/s ${micros(pair.raw!)} µs, ` +
        `daemon ${integer(pair.daemon!.requestsPerSecond)} req/s ${micros(pair.daemon!)} µs, ratio ${ratio.toFixed(2)}`,
    );
  }
  return {
    raw: medianSummary(collected.raw),
    daemon: medianSummary(collected.daemon),
    ratio: median(ratios),
  };
}

async function main(): Promise<void> {
  const nodeFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const daemon = await startChildServer('./wire-daemon.ts', { nodeFlags });
  servers.push(daemon);
  const daemonConnection = await BenchConnection.open(daemon.socketPath);
  connections.push(daemonConnection);
  await daemonConnection.initialize();
  // The raw server answers with the daemon's own capabilities bytes, so both send the same frames.
  const { frame, line } = await daemonConnection.call('capabilities', {});
  const raw = await startChildServer('./echo-server.ts', {
    nodeFlags,
    env: {
      BENCH_ECHO_INSTANCE: String(frame.instance_id),
      BENCH_ECHO_RESULT: JSON.stringify(frame.result),
    },
  });
  servers.push(raw);
  const rawConnection = await BenchConnection.open(raw.socketPath);
  connections.push(rawConnection);
  await rawConnection.initialize();

  console.log(
    `capabilities over a Unix socket: request ${BenchConnection.requestBytes} B, response ${Buffer.byteLength(line) + 1} B; ` +
      `${rounds} round(s) of ${warmupMs / 1_000} s warm-up + ${measureMs / 1_000} s measured per server and mode; ` +
      `pipelined keeps ${inFlight} in flight`,
  );
  console.log(
    `daemon pid ${daemon.pid}, raw echo pid ${raw.pid}, node ${process.version}, ` +
      `${availableParallelism()} cpus, load average ${loadAverage()}\n`,
  );

  const targets: Target[] = [
    { name: 'raw', connection: rawConnection },
    { name: 'daemon', connection: daemonConnection },
  ];
  const results = new Map<Mode, ModeResult>();
  for (const mode of modes) results.set(mode, await measureMode(mode, targets));
  console.log(`\nmedians over ${rounds} round(s); load average now ${loadAverage()}\n`);
  printResults(results);
}

try {
  await main();
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  for (const connection of connections) connection.close();
  await Promise.all(servers.map((server) => server.stop()));
}
