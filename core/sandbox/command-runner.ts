import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { type Clock, deadlineAt } from '../clock.js';
import { ARGUMENTS_FD, type BwrapInvocation, bwrapArguments, encodeOptions } from './bwrap-arguments.js';
import { COMMAND_BOUNDS, COMMAND_LIMITS } from './command-limits.js';
import { type CommandSlot, CommandSlots } from './command-slots.js';
import { CoverSources, SandboxClosed } from './cover-sources.js';
import { OutputCollector } from './output-collector.js';
import type { CommandBounds, CommandGroup, ResourceControl } from './resource-control.js';
import { isInside, type SandboxView } from './sandbox-view.js';
import { closeScan } from './scan-thread.js';
import type { ScanRequest, WorkspaceScan } from './workspace-scan.js';

export interface CommandRequest {
  command: string;
  workspace: string;
  /** The real paths of the other live sessions' workspaces, which the command must not see. */
  otherWorkspaces?: readonly string[];
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
  /** What each stream produced in all. */
  stdoutBytes: number;
  stderrBytes: number;
}

/** Sets one rlimit of a process (prlimit(2) through the native addon in the daemon). */
export type LimitProcess = (pid: number, resource: 'core' | 'fsize' | 'data', bytes: number) => void;

export interface CommandSandboxOptions {
  bwrap: string;
  clock: Clock;
  /** What commands see of the machine, resolved at startup. */
  view: SandboxView;
  /** The seccomp program (seccomp-filter.ts) for this machine's architecture. */
  seccomp: Buffer;
  control: ResourceControl;
  bounds: CommandBounds;
  limitProcess: LimitProcess;
  /** Where the covers are made: a folder of the daemon's own. */
  coverDirectory: string;
  /** Bytes of output kept per command; the default is `COMMAND_LIMITS.output_bytes`. */
  outputBytes?: number;
  /** Commands running at once; the default is `COMMAND_BOUNDS.concurrent`. */
  concurrent?: number;
}

export class SandboxStartFailed extends Error {
  constructor() {
    super('the sandbox could not be started');
    this.name = 'SandboxStartFailed';
  }
}

type KillReason = 'timeout' | 'abort' | 'close';

/** A command ready to start: bwrap's options and the descriptors they name, and its cgroup if any. */
interface Prepared {
  invocation: BwrapInvocation;
  group: CommandGroup | null;
}

interface Running {
  kill(reason: KillReason): void;
  settled: Promise<unknown>;
}

/**
 * The first process of every command: it waits for the daemon to put it in the command's cgroup and set its
 * rlimits, then becomes bwrap. Its stdin then carries nothing more, so the command reads end of file.
 */
const GATE = 'read -r go && [ "$go" = go ] && exec "$@"';

/**
 * Runs shell commands inside bubblewrap (see bwrap-arguments.ts for what a command sees), at most
 * `concurrent` at once. Each command's time starts when it is asked for, so a wait for a slot and the scan
 * of its workspace count against it. A command is killed whole (the gate's process group is bwrap's, and
 * the PID namespace takes everything inside with it) at its time limit, when its signal aborts, or on close.
 */
export class CommandSandbox {
  readonly #options: CommandSandboxOptions;
  readonly #outputBytes: number;
  readonly #slots: CommandSlots;
  readonly #covers: CoverSources;
  readonly #running = new Set<Running>();
  #closed = false;

  constructor(options: CommandSandboxOptions) {
    const outputBytes = options.outputBytes ?? COMMAND_LIMITS.output_bytes;
    if (!Number.isSafeInteger(outputBytes) || outputBytes < 1) {
      throw new RangeError('the output bound must be a positive integer');
    }
    this.#options = options;
    this.#outputBytes = outputBytes;
    this.#slots = new CommandSlots(options.concurrent ?? COMMAND_BOUNDS.concurrent);
    this.#covers = new CoverSources(options.coverDirectory);
  }

  /** Commands holding a slot now: being prepared or running. */
  get running(): number {
    return this.#slots.running;
  }

  /** Empties the covers' folder of an earlier daemon of this home; before the first command. */
  sweep(): Promise<void> {
    return this.#covers.sweep();
  }

  /**
   * Resolves once the command has exited and its pipes have closed, whatever its exit, or with a timed out
   * or cancelled outcome when it never started. Rejects only when the request is out of range or holds a
   * NUL (RangeError), the sandbox is closed (SandboxClosed), the workspace cannot be prepared
   * (ScanRefusal), or the sandbox itself cannot be started (SandboxStartFailed).
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
    if (request.signal.aborted) return notStarted({ timedOut: false });
    const { clock } = this.#options;
    const at = clock.now() + timeoutMs;
    const preparing = new AbortController();
    const timer = deadlineAt(clock, at, () => preparing.abort('timeout'));
    const onAbort = (): void => preparing.abort('abort');
    request.signal.addEventListener('abort', onAbort, { once: true });
    let slot: CommandSlot | null = null;
    let scan: WorkspaceScan | null = null;
    let group: CommandGroup | null = null;
    try {
      slot = await this.#slots.acquire(preparing.signal);
      if (this.#closed) throw new SandboxClosed();
      scan = await slot.scanner.scan(this.#scanRequest(request.workspace), preparing.signal);
      const prepared = await this.#prepare(scan, request.otherWorkspaces ?? []);
      group = prepared.group;
      if (this.#closed) throw new SandboxClosed();
      preparing.signal.throwIfAborted();
      const held = { slot, scan };
      slot = null;
      scan = null;
      group = null;
      return await this.#spawn(prepared, request, at, held);
    } catch (error) {
      if (preparing.signal.aborted && error === preparing.signal.reason) {
        return notStarted({ timedOut: preparing.signal.reason === 'timeout' });
      }
      // Whatever failed while the sandbox was closing (a scan it ended, covers it removed) failed for that.
      if (this.#closed) throw new SandboxClosed();
      throw error;
    } finally {
      timer.cancel();
      request.signal.removeEventListener('abort', onAbort);
      if (scan !== null) closeScan(scan);
      void group?.remove();
      slot?.release();
    }
  }

  /** Kills every command still running and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running];
    for (const command of running) command.kill('close');
    await Promise.allSettled(running.map((command) => command.settled));
    await Promise.all([this.#covers.close(), this.#slots.close(), this.#options.control.close()]);
  }

  #scanRequest(workspace: string): ScanRequest {
    const { view } = this.#options;
    return {
      workspace,
      daemonHome: view.daemonHome,
      hiddenDirectories: view.socket ? [view.socket.directory] : [],
      hiddenPaths: view.credentialPaths,
      outsidePaths: [
        view.daemonHome,
        ...view.credentialPaths.filter((path) => view.readable.some((entry) => isInside(path, entry.path))),
      ],
      socket: view.socket,
    };
  }

  async #prepare(scan: WorkspaceScan, otherWorkspaces: readonly string[]): Promise<Prepared> {
    const covers = await this.#covers.paths();
    const invocation = bwrapArguments({
      view: this.#options.view,
      scan,
      emptyFile: covers.file,
      emptyDirectory: covers.directory,
      otherWorkspaces,
    });
    let group: CommandGroup | null;
    try {
      group = await this.#options.control.group();
    } catch {
      throw new SandboxStartFailed();
    }
    return { invocation, group };
  }

  /** Starts the gate; the scan's descriptors are closed once the child has them, the slot once it is gone. */
  #spawn(
    prepared: Prepared,
    request: CommandRequest,
    at: number,
    { slot, scan }: { slot: CommandSlot; scan: WorkspaceScan },
  ): Promise<CommandOutcome> {
    const { invocation, group } = prepared;
    const { bwrap, clock, seccomp, bounds, control, limitProcess } = this.#options;
    let child: ChildProcess;
    try {
      child = spawn(
        '/bin/sh',
        ['-c', GATE, 'sh', bwrap, '--args', String(ARGUMENTS_FD), '--', '/bin/sh', '-c', request.command],
        {
          stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', ...invocation.heldFds],
          // Its own process group, so one kill reaches bwrap and its PID namespace's init together.
          detached: true,
          // bwrap's own environment stays readable inside, as /proc/1/environ; the shell adds PWD, which
          // would name the daemon's working directory.
          env: {},
          cwd: '/',
        },
      );
    } catch {
      slot.release();
      void group?.remove();
      return Promise.reject(new SandboxStartFailed());
    } finally {
      closeScan(scan);
    }
    const [gate, stdout, stderr, options, program, status] = child.stdio as unknown as [
      Writable,
      Readable,
      Readable,
      Writable,
      Writable,
      Readable,
    ];
    for (const stream of [gate, options, program, status]) stream.on('error', () => {});
    options.end(encodeOptions(invocation.options));
    program.end(seccomp);
    const report = new SandboxReport();
    status.on('data', (chunk: Buffer) => report.add(chunk));
    const output = new OutputCollector(this.#outputBytes);
    stdout.on('data', (chunk: Buffer) => output.add('stdout', chunk));
    stderr.on('data', (chunk: Buffer) => output.add('stderr', chunk));

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
    const deadline = deadlineAt(clock, at, () => kill('timeout'));
    const onAbort = (): void => kill('abort');
    request.signal.addEventListener('abort', onAbort, { once: true });

    const settled = new Promise<CommandOutcome>((resolve, reject) => {
      let done = false;
      let startFailed = false;
      const finish = (): void => {
        done = true;
        deadline.cancel();
        request.signal.removeEventListener('abort', onAbort);
        this.#running.delete(running);
        void group?.remove();
        slot.release();
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
        // bwrap exits 1 without reporting the command's exit when it could not set the sandbox up.
        if (startFailed || (killedFor === null && !report.ran && (exitCode === 1 || !report.started))) {
          reject(new SandboxStartFailed());
          return;
        }
        resolve({
          exitCode,
          signal,
          timedOut: killedFor === 'timeout',
          cancelled: killedFor === 'abort' || killedFor === 'close',
          ...output.result(),
        });
      });
      if (child.pid === undefined) return;
      const pid = child.pid;
      void (async () => {
        try {
          await group?.join(pid);
          limitProcess(pid, 'core', 0);
          limitProcess(pid, 'fsize', COMMAND_BOUNDS.file_size_bytes);
          if (control.enforcedBy === 'rlimit') limitProcess(pid, 'data', bounds.memoryBytes);
          gate.end('go\n');
        } catch {
          startFailed = true;
          kill('abort');
        }
      })();
    });
    const running: Running = { kill, settled };
    this.#running.add(running);
    return settled;
  }
}

/** What bwrap's status lines said: whether it made the sandbox's process, and whether the command ran. */
class SandboxReport {
  #text = '';

  add(chunk: Buffer): void {
    // Two short JSON lines in all; anything longer is not bwrap's.
    if (this.#text.length < 4_096) this.#text += chunk.toString('utf8');
  }

  get started(): boolean {
    return this.#text.includes('"child-pid"');
  }

  get ran(): boolean {
    return this.#text.includes('"exit-code"');
  }
}

function notStarted({ timedOut }: { timedOut: boolean }): CommandOutcome {
  return {
    exitCode: null,
    signal: null,
    timedOut,
    cancelled: !timedOut,
    output: '',
    truncated: false,
    stdoutBytes: 0,
    stderrBytes: 0,
  };
}
