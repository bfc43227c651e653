import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { type Clock, deadlineAt } from '../clock.js';
import type { ConfinedWorkspace, OwnFolder } from '../confinement/confined-workspace.js';
import { ARGUMENTS_FD, type BwrapInvocation, bwrapArguments, encodeOptions } from './bwrap-arguments.js';
import { COMMAND_BOUNDS, COMMAND_LIMITS } from './command-limits.js';
import {
  type CommandOutcome,
  type CommandRequest,
  notStarted,
  SandboxStartFailed,
} from './command-outcome.js';
import { type CommandSlot, CommandSlots } from './command-slots.js';
import { CoverSources, SandboxClosed } from './cover-sources.js';
import { OutputCollector } from './output-collector.js';
import type { CommandBounds, CommandGroup, ResourceControl } from './resource-control.js';
import { SandboxReport } from './sandbox-report.js';
import { isInside, type SandboxView } from './sandbox-view.js';
import { closeScan } from './scan-thread.js';
import type { ScanRequest, WorkspaceScan } from './workspace-scan.js';
import { WorkspaceScanner } from './workspace-scanner.js';

export { type CommandOutcome, type CommandRequest, SandboxStartFailed } from './command-outcome.js';

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
  /** Scans workspaces; one of its own by default. */
  scanner?: Scanner;
}

/** What the sandbox asks of a workspace scanner (workspace-scanner.ts). */
export type Scanner = Pick<WorkspaceScanner, 'known' | 'scan' | 'close'>;

/** What the sandbox is doing now, for `status`. */
export interface CommandActivity {
  /** Commands holding a slot: their workspace's last check, or running. */
  slots_in_use: number;
  /** Commands waiting for a slot, and the sessions they belong to. */
  waiting: number;
  waiting_sessions: number;
  /** Commands whose workspace is being checked for the first time, before they wait for a slot. */
  scanning: number;
}

type KillReason = 'timeout' | 'abort' | 'close';

/** A command ready to start: bwrap's options, the scan whose descriptors they name, and its cgroup if any. */
interface Prepared {
  invocation: BwrapInvocation;
  scan: WorkspaceScan;
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
 * `concurrent` at once, the slots shared fairly between sessions (command-slots.ts). A workspace met for the
 * first time is scanned before its command waits for a slot, so that a long first walk holds none; the scan
 * in the slot then reads only what changed (scan-cache.ts). A command's time limit runs from its start: one
 * still waiting (for a slot or its workspace's check) when the limit has passed since it was asked for is
 * not started (`queueTimedOut`). A command is killed whole (the gate's process group is bwrap's, and the PID
 * namespace takes everything inside with it) at its time limit, when its signal aborts, or on close.
 */
export class CommandSandbox {
  readonly #options: CommandSandboxOptions;
  readonly #outputBytes: number;
  readonly #slots: CommandSlots;
  readonly #scanner: Scanner;
  readonly #covers: CoverSources;
  readonly #running = new Set<Running>();
  #learning = 0;
  #closed = false;

  constructor(options: CommandSandboxOptions) {
    const outputBytes = options.outputBytes ?? COMMAND_LIMITS.output_bytes;
    if (!Number.isSafeInteger(outputBytes) || outputBytes < 1) {
      throw new RangeError('the output bound must be a positive integer');
    }
    this.#options = options;
    this.#outputBytes = outputBytes;
    this.#slots = new CommandSlots(options.concurrent ?? COMMAND_BOUNDS.concurrent);
    this.#scanner = options.scanner ?? new WorkspaceScanner();
    this.#covers = new CoverSources(options.coverDirectory);
  }

  /** Commands holding a slot now: being prepared or running. */
  get running(): number {
    return this.#slots.inUse;
  }

  activity(): CommandActivity {
    return {
      slots_in_use: this.#slots.inUse,
      waiting: this.#slots.waiting,
      waiting_sessions: this.#slots.waitingSessions,
      scanning: this.#learning,
    };
  }

  /** Empties the covers' folder of an earlier daemon of this home; before the first command. */
  sweep(): Promise<void> {
    return this.#covers.sweep();
  }

  /**
   * Resolves once the command has exited and its pipes have closed, whatever its exit, or with a cancelled or
   * queue-timed-out outcome when it never started. Rejects only when the request is out of range or holds a
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
    if (request.signal.aborted) return notStarted('abort');
    const { clock } = this.#options;
    const preparing = new AbortController();
    const timer = deadlineAt(clock, clock.now() + timeoutMs, () => preparing.abort('timeout'));
    const onAbort = (): void => preparing.abort('abort');
    request.signal.addEventListener('abort', onAbort, { once: true });
    let prepareEnded = false;
    const endPreparing = (): void => {
      if (prepareEnded) return;
      prepareEnded = true;
      timer.cancel();
      request.signal.removeEventListener('abort', onAbort);
    };
    const scanRequest = this.#scanRequest(request.workspace);
    const workspacePath = request.workspace.path;
    let slot: CommandSlot | null = null;
    let prepared: Prepared | null = null;
    try {
      if (!this.#scanner.known(workspacePath)) await this.#learn(scanRequest, preparing.signal);
      slot = await this.#slots.acquire(request.session, preparing.signal);
      if (this.#closed) throw new SandboxClosed();
      prepared = await this.#prepare(scanRequest, request.otherWorkspaces ?? [], preparing.signal);
      if (this.#closed) throw new SandboxClosed();
      preparing.signal.throwIfAborted();
      endPreparing();
      const held = { slot, prepared };
      slot = null;
      prepared = null;
      return await this.#spawn(held.prepared, request, held.slot);
    } catch (error) {
      if (preparing.signal.aborted && error === preparing.signal.reason) {
        return notStarted(preparing.signal.reason === 'timeout' ? 'timeout' : 'abort');
      }
      // Whatever failed while the sandbox was closing (a scan it ended, covers it removed) failed for that.
      if (this.#closed) throw new SandboxClosed();
      throw error;
    } finally {
      endPreparing();
      if (prepared !== null) {
        closeScan(prepared.scan);
        void prepared.group?.remove();
      }
      slot?.release();
    }
  }

  /** Kills every command still running and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running];
    for (const command of running) command.kill('close');
    await Promise.allSettled(running.map((command) => command.settled));
    await Promise.all([this.#covers.close(), this.#scanner.close(), this.#options.control.close()]);
  }

  #scanRequest(workspace: ConfinedWorkspace | OwnFolder): ScanRequest {
    const { view } = this.#options;
    return {
      workspace: workspace.path,
      pinned: 'identity' in workspace ? workspace : null,
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

  /** A first scan of a workspace, outside any slot: it fills the workspace's thread with what it learns. */
  async #learn(scanRequest: ScanRequest, signal: AbortSignal): Promise<void> {
    this.#learning += 1;
    try {
      closeScan(await this.#scanner.scan(scanRequest, signal));
    } finally {
      this.#learning -= 1;
    }
  }

  /** The workspace's last check and the command's cgroup, made side by side. */
  async #prepare(
    scanRequest: ScanRequest,
    otherWorkspaces: readonly string[],
    signal: AbortSignal,
  ): Promise<Prepared> {
    const [scanned, made, covers] = await Promise.allSettled([
      this.#scanner.scan(scanRequest, signal),
      this.#options.control.group(),
      this.#covers.paths(),
    ]);
    if (scanned.status === 'fulfilled' && made.status === 'fulfilled' && covers.status === 'fulfilled') {
      const scan = scanned.value;
      try {
        const invocation = bwrapArguments({
          view: this.#options.view,
          scan,
          emptyFile: covers.value.file,
          emptyDirectory: covers.value.directory,
          otherWorkspaces,
        });
        return { invocation, scan, group: made.value };
      } catch (error) {
        closeScan(scan);
        void made.value?.remove();
        throw error;
      }
    }
    if (scanned.status === 'fulfilled') closeScan(scanned.value);
    if (made.status === 'fulfilled') void made.value?.remove();
    if (scanned.status === 'rejected') throw scanned.reason;
    if (covers.status === 'rejected') throw covers.reason;
    throw new SandboxStartFailed();
  }

  /**
   * Starts the gate, and the command's time with it; the scan's descriptors are closed once the child has
   * them, the slot once it is gone.
   */
  #spawn(prepared: Prepared, request: CommandRequest, slot: CommandSlot): Promise<CommandOutcome> {
    const { invocation, scan, group } = prepared;
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
    const deadline = deadlineAt(clock, clock.now() + request.timeoutMs, () => kill('timeout'));
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
          queueTimedOut: false,
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
