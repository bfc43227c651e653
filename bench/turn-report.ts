import { OPERATION_LIMITS, OPERATION_RETENTION_MS, PROFILE_LIMITS } from '../core/limits.js';
import { printTable } from './report.js';
import { median } from './stats.js';

/** What the turn bench reports (bench/turn.ts runs it): its figures, and how they are printed. */

/** The session count and share of the direct loop's throughput the daemon is held to. */
const TARGET = { sessions: 32, ratio: 0.5 } as const;
/** How often the daemon's resident memory is sampled in a measured window. */
export const SAMPLE_MS = 100;
/** The operations a bench turn retains: its turn.start and its tool result. */
const OPERATIONS_PER_TURN = 2;
/** What the bench's daemons raise the operation and evidence bounds to. */
export const RAISED_RETENTION = 1_048_576;

export interface Latency {
  p50Micros: number;
  p99Micros: number;
}

export interface RunResult {
  turnsPerSecond: number;
  overhead: Latency;
  /** Request bytes the provider received per turn, both requests together. */
  providerBytesPerTurn: number;
  /** Connections the provider accepted during the run. */
  providerConnections: number;
  /** Turns each session ran in the run, warm-up included. */
  turnsPerSession: number;
  /** Daemon runs: its largest VmRSS sampled in the measured window, and its VmRSS after set-up, in bytes. */
  rss: { peak: number; setUp: number } | null;
}

export interface Collected {
  direct: RunResult[];
  daemon: RunResult[];
  ratios: number[];
}

export const integer = (value: number) => Math.round(value).toString();
export const micros = (latency: Latency) => `${integer(latency.p50Micros)}/${integer(latency.p99Micros)}`;
const mebibytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;
const thousands = (value: number) => value.toLocaleString('en-US');

const medianOf = (runs: readonly RunResult[], figure: (run: RunResult) => number) => median(runs.map(figure));
const medianLatency = (runs: readonly RunResult[]): Latency => ({
  p50Micros: medianOf(runs, (run) => run.overhead.p50Micros),
  p99Micros: medianOf(runs, (run) => run.overhead.p99Micros),
});

export function printResults(results: Map<number, Collected>): void {
  const rows = [...results].map(([sessions, { direct, daemon, ratios }]) => [
    String(sessions),
    integer(medianOf(direct, (run) => run.turnsPerSecond)),
    integer(medianOf(daemon, (run) => run.turnsPerSecond)),
    median(ratios).toFixed(2),
    micros(medianLatency(direct)),
    micros(medianLatency(daemon)),
  ]);
  printTable(
    [
      'sessions',
      'direct turns/s',
      'daemon turns/s',
      'ratio',
      'direct overhead p50/p99 µs',
      'daemon overhead p50/p99 µs',
    ],
    rows,
  );
  console.log('');
  const target = results.get(TARGET.sessions);
  if (target) {
    const ratio = median(target.ratios);
    const verdict = ratio >= TARGET.ratio ? 'PASS' : 'BELOW';
    console.log(
      `${TARGET.sessions} sessions: ${ratio.toFixed(2)} of the direct loop (target ${TARGET.ratio.toFixed(2)}) ${verdict}`,
    );
  }
  for (const [sessions, { direct, daemon }] of results) {
    const figure = (runs: readonly RunResult[], of: (run: RunResult) => number) =>
      integer(medianOf(runs, of));
    console.log(
      `${sessions} session(s): turns per session in a run direct ${figure(direct, (run) => run.turnsPerSession)}, ` +
        `daemon ${figure(daemon, (run) => run.turnsPerSession)}; provider request bytes per turn ` +
        `direct ${figure(direct, (run) => run.providerBytesPerTurn)}, daemon ${figure(daemon, (run) => run.providerBytesPerTurn)}; ` +
        `provider connections opened per run direct ${figure(direct, (run) => run.providerConnections)}, ` +
        `daemon ${figure(daemon, (run) => run.providerConnections)}`,
    );
  }
  const most = Math.max(...results.keys());
  const daemonRuns = results.get(most)!.daemon;
  console.log(
    `daemon RSS with ${most} turn(s) in flight: ${mebibytes(medianOf(daemonRuns, (run) => run.rss!.peak))} ` +
      `(the largest VmRSS sampled every ${SAMPLE_MS} ms in the measured window, median of the rounds; ` +
      `${mebibytes(medianOf(daemonRuns, (run) => run.rss!.setUp))} once its sessions were set up)`,
  );
}

export function describeRetention(): string {
  const ledgerTurns = OPERATION_LIMITS.table_operations / OPERATIONS_PER_TURN;
  const evidenceTurns = PROFILE_LIMITS.evidence_turns;
  const windowSeconds = OPERATION_RETENTION_MS / 1_000;
  const ceiling = Math.min(ledgerTurns, evidenceTurns);
  return (
    `retention: as built, a daemon keeps ${thousands(OPERATION_LIMITS.table_operations)} operation outcomes ` +
    `(${thousands(OPERATION_LIMITS.connection_operations)} per connection, ${OPERATIONS_PER_TURN} per turn here) ` +
    `and ${thousands(evidenceTurns)} turns of evidence, each for ` +
    `${windowSeconds} s after it settles, and refuses turns beyond either: at most ${thousands(ceiling)} such turns ` +
    `per ${windowSeconds} s (${(ceiling / windowSeconds).toFixed(2)} turns/s sustained). The bench's daemons raise ` +
    `both bounds to ${thousands(RAISED_RETENTION)} (bench/turn-daemon.ts); what they keep of earlier turns is in ` +
    `the RSS above.`
  );
}
