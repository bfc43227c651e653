import type { ConfinedWorkspace, OwnFolder } from '../confinement/confined-workspace.js';

/** What one command asked for and what became of it. */

export interface CommandRequest {
  command: string;
  /** The session's workspace, pinned: a command runs there only while it is the pinned folder. */
  workspace: ConfinedWorkspace | OwnFolder;
  /** Whose command it is: slots are shared fairly between sessions. */
  session: string;
  /** The real paths of the other live sessions' workspaces, which the command must not see. */
  otherWorkspaces?: readonly string[];
  /** From the command's start; a command not started when it has passed since the request is not started at all. */
  timeoutMs: number;
  signal: AbortSignal;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  /** It ran and was killed at its time limit. */
  timedOut: boolean;
  /** Its time limit passed while it still waited for a slot or for its workspace's check: nothing ran. */
  queueTimedOut: boolean;
  cancelled: boolean;
  /** stdout and stderr interleaved in arrival order, cut to `outputBytes` on a UTF-8 boundary. */
  output: string;
  truncated: boolean;
  /** What each stream produced in all. */
  stdoutBytes: number;
  stderrBytes: number;
}

export class SandboxStartFailed extends Error {
  constructor() {
    super('the sandbox could not be started');
    this.name = 'SandboxStartFailed';
  }
}

/** A command that never started: its time passed while it waited, or it was cancelled first. */
export function notStarted(why: 'timeout' | 'abort'): CommandOutcome {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    queueTimedOut: why === 'timeout',
    cancelled: why === 'abort',
    output: '',
    truncated: false,
    stdoutBytes: 0,
    stderrBytes: 0,
  };
}
