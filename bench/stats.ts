/** Nearest-rank percentile of values already sorted ascending. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export interface Summary {
  requestsPerSecond: number;
  p50Micros: number;
  p99Micros: number;
}

/** Throughput over the measured window and latency percentiles of the requests answered in it. */
export function summarize(latenciesNs: Float64Array, seconds: number): Summary {
  const sorted = latenciesNs.slice().sort();
  return {
    requestsPerSecond: sorted.length / seconds,
    p50Micros: percentile(sorted, 0.5) / 1_000,
    p99Micros: percentile(sorted, 0.99) / 1_000,
  };
}

/** The median of each figure across rounds. */
export function medianSummary(rounds: readonly Summary[]): Summary {
  return {
    requestsPerSecond: median(rounds.map((round) => round.requestsPerSecond)),
    p50Micros: median(rounds.map((round) => round.p50Micros)),
    p99Micros: median(rounds.map((round) => round.p99Micros)),
  };
}
