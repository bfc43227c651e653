import { fitTextInJson } from '../tool-results/fitted-json.js';
import { COMMAND_LIMITS } from './command-limits.js';
import type { CommandOutcome } from './command-runner.js';

/**
 * The compact JSON text the model receives for one command, at most `COMMAND_LIMITS.result_bytes` of it
 * encoded: the output is cut further when escaping it would pass the bound, while the exit code, the
 * signal and both streams' sizes are always there.
 */
export function commandResultText(outcome: CommandOutcome): string {
  return fitTextInJson(outcome.output, COMMAND_LIMITS.result_bytes, (output, cut) => ({
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    timed_out: outcome.timedOut,
    queue_timed_out: outcome.queueTimedOut,
    cancelled: outcome.cancelled,
    output,
    truncated: outcome.truncated || cut,
    stdout_bytes: outcome.stdoutBytes,
    stderr_bytes: outcome.stderrBytes,
  })).json;
}
