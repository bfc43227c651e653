import type { CommandOutcome } from './command-runner.js';

/** The compact JSON text the model receives for one command. */
export function commandResultText(outcome: CommandOutcome): string {
  return JSON.stringify({
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    timed_out: outcome.timedOut,
    cancelled: outcome.cancelled,
    output: outcome.output,
    truncated: outcome.truncated,
    output_bytes: outcome.outputBytes,
  });
}
