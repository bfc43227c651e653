import { WireCallError } from '../../client/wire-client.js';

/** Exit statuses of `magid exec`, `magid sessions` and `magid replay`. */
export const EXIT = {
  completed: 0,
  failed: 1,
  /** Refused by the daemon, or bad usage. */
  refused: 2,
  /** Stopped by the user (Ctrl-C). */
  interrupted: 130,
} as const;

/** Bad usage: the command line or the input cannot be run. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command cannot go on; `status` is the exit status, `message` the one line said on stderr. */
export class ExecFailure extends Error {
  override readonly name = 'ExecFailure';
  readonly status: number;
  constructor(message: string, status: number = EXIT.failed) {
    super(message);
    this.status = status;
  }
}

/** The one-line reason and exit status of an error that ends the command. */
export function failureOf(error: unknown): { message: string; status: number } {
  if (error instanceof ExecFailure) return { message: error.message, status: error.status };
  if (error instanceof UsageError) return { message: error.message, status: EXIT.refused };
  if (error instanceof WireCallError) {
    return {
      message: `the daemon refused ${error.method}: ${error.code}: ${error.detail}`,
      status: EXIT.refused,
    };
  }
  return { message: error instanceof Error ? error.message : String(error), status: EXIT.failed };
}
