import { OPERATION_LIMITS, OPERATION_RETENTION_MS } from '../core/limits.js';
import { RECOVERY_METHODS, type Tally } from './operations-actors.js';
import { loadAverage, printTable } from './report.js';

/** What the operations bench reports (bench/operations.ts runs it): its windows and its summary. */

export interface Retention {
  operations: { retained: number; bytes: number; saturated: boolean };
  recovery_slots: { slots: number; retained: number; full: number };
  refusals: { retained: number; saturated: boolean };
  connections_at_share: number;
  evidence_turns: { retained: number; saturated: boolean };
}

export interface Window {
  end: number;
  mutations: number;
  turns: number;
  stopped: number;
  retention: Retention;
  rssBytes: number;
  recoveryRefusals: number;
  otherRefusals: number;
  saturated: string[];
}

export const mebibytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)}`;
const perSecond = (count: number, ms: number) => (count / (ms / 1_000)).toFixed(1);

export function refusals(tally: Tally, recovery: boolean): number {
  let count = 0;
  for (const [method, codes] of tally.answers) {
    if (RECOVERY_METHODS.has(method) !== recovery) continue;
    for (const [code, times] of codes) if (code !== 'ok') count += times;
  }
  return count;
}

export function turnsOf(tally: Tally): number {
  return (tally.turns.get('plain') ?? 0) + (tally.turns.get('builtin') ?? 0) + (tally.turns.get('app') ?? 0);
}

export const WINDOW_HEADER = [
  'window end s',
  'mutations/s',
  'turns/s',
  'stopped',
  'retained',
  'table MiB',
  'in slots',
  'refusals',
  'at share',
  'evidence',
  'RSS MiB',
  'refused recovery',
  'refused other',
];

/** One window's line of the table. */
export function windowRow(window: Window): string {
  const { retention } = window;
  return [
    window.end.toFixed(0),
    window.mutations.toFixed(1),
    window.turns.toFixed(1),
    String(window.stopped),
    String(retention.operations.retained),
    mebibytes(retention.operations.bytes),
    String(retention.recovery_slots.retained),
    String(retention.refusals.retained),
    String(retention.connections_at_share),
    String(retention.evidence_turns.retained),
    mebibytes(window.rssBytes),
    String(window.recoveryRefusals),
    String(window.otherRefusals),
  ].join(' | ');
}

/** Everything a run found, for its summary. */
export interface RunSummary {
  windows: readonly Window[];
  windowSeconds: number;
  tally: Tally;
  /** The mutations per second asked for, and those sent. */
  rate: number;
  sent: number;
  elapsedMs: number;
  /** Rotations not sent because the daemon was behind. */
  behind: number;
  setUpRss: number;
  peakRss: number;
  saturatedSeen: ReadonlySet<string>;
  costs: ReadonlyArray<{ kind: string; heap: number; charged: number | null; lookup: number }>;
}

/** Prints the run's summary; returns the refusals of the recovery methods, which must be none. */
export function printSummary(run: RunSummary): number {
  const {
    windows,
    windowSeconds,
    tally,
    rate,
    sent,
    elapsedMs,
    behind,
    setUpRss,
    peakRss,
    saturatedSeen,
    costs,
  } = run;
  console.log(
    `\nthe first and the last of ${windows.length} window(s) of ${windowSeconds} s; load average now ${loadAverage()}\n`,
  );
  const first = windows[0]!;
  const last = windows.at(-1)!;
  const steady = windows.filter((window) => window.end * 1_000 > OPERATION_RETENTION_MS);
  printTable(
    ['figure', 'first window', 'last window', 'last / first'],
    [
      [
        'mutations/s',
        first.mutations.toFixed(1),
        last.mutations.toFixed(1),
        (last.mutations / first.mutations).toFixed(2),
      ],
      ['turns/s', first.turns.toFixed(1), last.turns.toFixed(1), (last.turns / first.turns).toFixed(2)],
      [
        'daemon RSS MiB',
        mebibytes(first.rssBytes),
        mebibytes(last.rssBytes),
        (last.rssBytes / first.rssBytes).toFixed(2),
      ],
    ],
  );
  console.log('');
  console.log(
    `mutations: ${perSecond(sent, elapsedMs)}/s sustained of ${rate}/s asked (${(sent / ((rate * elapsedMs) / 1_000)).toFixed(2)}); ` +
      `${behind} rotation(s) not sent because the daemon was behind`,
  );
  console.log(
    `turns: ${turnsOf(tally)} completed, ${perSecond(turnsOf(tally), elapsedMs)}/s (plain ${tally.turns.get('plain') ?? 0}, ` +
      `built-in tool ${tally.turns.get('builtin') ?? 0}, application tool ${tally.turns.get('app') ?? 0}), ` +
      `${tally.turns.get('stopped') ?? 0} slow turns stopped and cancelled`,
  );
  if (steady.length > 0) {
    const rss = steady.map((window) => window.rssBytes);
    console.log(
      `daemon RSS once outcomes expire as fast as they come (after ${OPERATION_RETENTION_MS / 1_000} s): ` +
        `${mebibytes(Math.min(...rss))} to ${mebibytes(Math.max(...rss))} MiB; peak of the run ${mebibytes(peakRss)} MiB`,
    );
  } else {
    console.log(
      `daemon RSS: ${mebibytes(setUpRss)} MiB after set-up, ${mebibytes(peakRss)} MiB at most (the run ended before ` +
        `${OPERATION_RETENTION_MS / 1_000} s, so outcomes were still accumulating)`,
    );
  }
  const averageBytes = last.retention.operations.bytes / Math.max(1, last.retention.operations.retained);
  console.log(
    `retained at the end: ${last.retention.operations.retained} outcomes in the table (${mebibytes(last.retention.operations.bytes)} MiB, ` +
      `${averageBytes.toFixed(0)} B each as charged), ${last.retention.recovery_slots.retained} in recovery slots, ` +
      `${last.retention.refusals.retained} refusals, ${last.retention.evidence_turns.retained} turns of evidence; ` +
      `bounds saturated at some sample: ${saturatedSeen.size === 0 ? 'none' : [...saturatedSeen].join(', ')}`,
  );
  const byCount = OPERATION_LIMITS.table_operations / (OPERATION_RETENTION_MS / 1_000);
  const byBytes = OPERATION_LIMITS.table_bytes / averageBytes / (OPERATION_RETENTION_MS / 1_000);
  console.log(
    `the table carries ${byCount.toFixed(0)} mutations/s for ${OPERATION_RETENTION_MS / 1_000} s by its count bound, ` +
      `${byBytes.toFixed(0)}/s by its byte bound at this run's outcomes`,
  );
  const recovery = [...RECOVERY_METHODS].map((method) => {
    const codes = tally.answers.get(method) ?? new Map<string, number>();
    const refused = [...codes].filter(([code]) => code !== 'ok').reduce((sum, [, times]) => sum + times, 0);
    return `${method} ${codes.get('ok') ?? 0} ok, ${refused} refused`;
  });
  const recoveryRefused = refusals(tally, true);
  console.log(`recovery methods: ${recovery.join('; ')}`);
  const other = [...tally.answers]
    .filter(([method]) => !RECOVERY_METHODS.has(method))
    .flatMap(([method, codes]) =>
      [...codes].filter(([code]) => code !== 'ok').map(([code, times]) => `${method} ${code} ${times}`),
    );
  console.log(`other refusals: ${other.length === 0 ? 'none' : other.join(', ')}`);
  if (tally.failures.length > 0) console.log(`went wrong: ${tally.failures.join('; ')}`);
  console.log(
    `refusals of the recovery methods: ${recoveryRefused} ${recoveryRefused === 0 && tally.failures.length === 0 ? 'PASS' : 'FAIL'}\n`,
  );

  printTable(
    ['retained outcome', 'heap B', 'charged B', 'lookup B', 'heap / lookup'],
    costs.map((cost) => [
      cost.kind,
      cost.heap.toFixed(0),
      cost.charged === null ? '-' : cost.charged.toFixed(0),
      String(cost.lookup),
      (cost.heap / cost.lookup).toFixed(2),
    ]),
  );
  console.log(
    '(heap: measured over 50,000 of each after a full collection; charged: what the table counts against its ' +
      'byte bound; a refusal is kept apart and counted by number only)',
  );
  return recoveryRefused;
}
