import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { type Clock, deadlineAt } from '../clock.js';
import { bwrapArguments, needsEmptyFile } from './bwrap-arguments.js';
import { COMMAND_LIMITS } from './command-limits.js';
import { EmptyFile, SandboxClosed } from './empty-file.js';
import { OutputCollector } from './output-collector.js';
import { resolveLayout } from './sandbox-layout.js';

export interface CommandRequest {
  command: string;
  workspace: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** stdout and stderr interleaved in arrival order, cut to `outputBytes` on a UTF-8 boundary. */
  output: string;
  truncated: boolean;
  /** The total produced. */
  outputBytes: number;
}

export interface CommandSandboxOptions {
  bwrap: string;
  clock: Clock;
  hiddenPaths: readonly string[];
  /** Bytes of output kept per command; the default is `COMMAND_LIMITS.output_bytes`. */
  outputBytes?: number;
}

export class SandboxStartFailed extends Error {
  constructor() {
    super('the sandbox could not be started');
    this.name = 'SandboxStartFailed';
  }
}

type KillReason = 'timeout' | 'abort' | 'close';

interface Running {
  kill(reason: KillReason): void;
  settled: Promise<unknown>;
}

/**
 * Runs shell commands inside bubblewrap: the root read-only, the workspace writable, the hidden paths
 * covered, no network, a clean environment. A command is killed whole (bwrap's process group; the PID
 * namespace takes everything inside with it) at its time limit, when its signal aborts, or on close.
 */
export class CommandSandbox {
  readonly #bwrap: string;
  readonly #clock: Clock;
  readonly #hiddenPaths: readonly string[];
  readonly #outputBytes: number;
  readonly #emptyFile = new EmptyFile();
  readonly #running = new Set<Running>();
  #closed = false;

  constructor(options: CommandSandboxOptions) {
    const outputBytes = options.outputBytes ?? COMMAND_LIMITS.output_bytes;
    if (!Number.isSafeInteger(outputBytes) || outputBytes < 1) {
      throw new RangeError('the output bound must be a positive integer');
    }
    this.#bwrap = options.bwrap;
    this.#clock = options.clock;
    this.#hiddenPaths = [...options.hiddenPaths];
    this.#outputBytes = outputBytes;
  }

  /**
   * Resolves once the command has exited and its pipes have closed, whatever its exit. Rejects only when
   * the request is out of range or holds a NUL (RangeError), the sandbox is closed (SandboxClosed), the
   * workspace is not a directory (WorkspaceUnavailable), or bwrap itself cannot be executed
   * (SandboxStartFailed).
   */
  async run(request: CommandRequest): Promise<CommandOutcome> {
    const { timeoutMs } = request;
    if (
      !Number.isSafeInteger(timeoutMs) ||
      timeoutMs < COMMAND_LIMITS.timeout_ms_min ||
      timeoutMs > COMMAND_LIMITS.timeout_ms_max
    ) {
      throw new RangeError('the command time limit is out of range');
    }
    // No argument of a process can hold one; spawn would refuse it with a message quoting the command.
    if (request.command.includes('\0')) throw new RangeError('the command contains a NUL character');
    if (this.#closed) throw new SandboxClosed();
    if (request.signal.aborted) return notStarted();
    const layout = await resolveLayout(request.workspace, this.#hiddenPaths);
    const emptyFile = needsEmptyFile(layout) ? await this.#emptyFile.path() : null;
    if (this.#closed) throw new SandboxClosed();
    if (request.signal.aborted) return notStarted();
    return this.#spawn(bwrapArguments(layout, emptyFile, request.command), request);
  }

  /** Kills every command still running and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running];
    for (const command of running) command.kill('close');
    await Promise.allSettled(running.map((command) => command.settled));
    await this.#emptyFile.close();
  }

  #spawn(args: string[], request: CommandRequest): Promise<CommandOutcome> {
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(this.#bwrap, args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so one kill reaches bwrap and its PID namespace's init together.
        detached: true,
        // bwrap's own environment stays readable inside, as /proc/1/environ.
        env: {},
      });
    } catch {
      return Promise.reject(new SandboxStartFailed());
    }
    const output = new OutputCollector(this.#outputBytes);
    child.stdout.on('data', (chunk: Buffer) => output.add(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.add(chunk));

    let exited = false;
    let killedFor: KillReason | null = null;
    const kill = (reason: KillReason): void => {
      // After exit the group may be gone and its id reused.
      if (exited || killedFor !== null || child.pid === undefined) return;
      killedFor = reason;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    child.once('exit', () => {
      exited = true;
    });
    const deadline = deadlineAt(this.#clock, this.#clock.now() + request.timeoutMs, () => kill('timeout'));
    const onAbort = (): void => kill('abort');
    request.signal.addEventListener('abort', onAbort, { once: true });

    const settled = new Promise<CommandOutcome>((resolve, reject) => {
      let done = false;
      const finish = (): void => {
        done = true;
        deadline.cancel();
        request.signal.removeEventListener('abort', onAbort);
        this.#running.delete(running);
      };
      child.on('error', () => {
        // Only a failed spawn reaches here: the kill goes through process.kill, not the child.
        if (done || child.pid !== undefined) return;
        finish();
        reject(new SandboxStartFailed());
      });
      child.once('close', (exitCode: number | null, signal: NodeJS.Signals | null) => {
        if (done) return;
        finish();
        resolve({
          exitCode,
          signal,
          timedOut: killedFor === 'timeout',
          cancelled: killedFor === 'abort' || killedFor === 'close',
          ...output.result(),
        });
      });
    });
    const running: Running = { kill, settled };
    this.#running.add(running);
    return settled;
  }
}

function notStarted(): CommandOutcome {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: true,
    output: '',
    truncated: false,
    outputBytes: 0,
  };
}
