import type { Worker } from 'node:worker_threads';
import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import type { ConfinedWorkspace, OwnFolder } from '../confinement/confined-workspace.js';
import { startModuleWorker } from '../module-worker.js';
import { parseWorkspaceToolRequest, type WorkspaceToolJob } from './workspace-tool-arguments.js';
import { failed, knownWorkspaceToolError, workspaceToolErrorOf } from './workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS } from './workspace-tool-limits.js';
import type { WorkspaceToolOutcome, WorkspaceToolRequest } from './workspace-tool-request.js';
import type { WorkspaceToolAnswer, WorkspaceToolMessage } from './workspace-tool-worker.js';

export { WORKSPACE_TOOL_ERRORS, type WorkspaceToolError } from './workspace-tool-errors.js';
export { WORKSPACE_TOOL_LIMITS } from './workspace-tool-limits.js';
export { WORKSPACE_TOOL_PARAMETERS } from './workspace-tool-parameters.js';
export type {
  WorkspaceToolName,
  WorkspaceToolOutcome,
  WorkspaceToolRequest,
} from './workspace-tool-request.js';

export interface WorkspaceToolsOptions {
  clock: Clock;
  /** How long a call may take from `run` on, its time in the queue included. */
  deadlineMs?: number;
  /** Threads working at once, each for a different session; further calls wait (see WorkspaceTools). */
  threads?: number;
  /** Abandoned threads that may still be alive before calls are refused as `unavailable`. */
  abandonedMax?: number;
}

interface Job {
  readonly id: number;
  readonly session: string;
  readonly work: WorkspaceToolJob;
  readonly resolve: (outcome: WorkspaceToolOutcome) => void;
  readonly signal: AbortSignal;
  readonly onAbort: () => void;
  deadline: Deadline | null;
  thread: ToolThread | null;
  settled: boolean;
}

interface ToolThread {
  readonly worker: Worker;
  job: Job | null;
}

const WORKER_URL = new URL(
  `./workspace-tool-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);

/**
 * The workspace file tools, each call run on one of a pool of worker threads (workspace-tool-worker.ts) so
 * that a hung filesystem stalls only its own call. A call that passes its deadline or is cancelled while
 * its thread still works is answered at once and its thread abandoned: terminating it is asked for, it is
 * never used again, and a new thread serves later calls. A thread blocked in the kernel cannot be stopped,
 * so abandoned threads are counted until they exit, and too many of them refuse further calls.
 *
 * Threads are shared fairly between sessions: a session has at most one call on a thread at a time, its
 * further calls wait in order behind it, and a free thread goes to the waiting session served least
 * recently (round-robin), so a session with slow calls delays only itself. A call's deadline counts from
 * `run`, its wait included.
 */
export class WorkspaceTools {
  readonly #clock: Clock;
  readonly #deadlineMs: number;
  readonly #threadsMax: number;
  readonly #abandonedMax: number;
  readonly #threads = new Set<ToolThread>();
  readonly #abandoned = new Set<Worker>();
  /** Calls waiting for a thread, by session, each session's in the order they came. */
  readonly #waiting = new Map<string, Job[]>();
  /** Sessions with a call on a thread. */
  readonly #running = new Set<string>();
  /** When each session with calls running or waiting was last given a thread, as a count of dispatches. */
  readonly #served = new Map<string, number>();
  #dispatches = 0;
  #nextId = 0;
  #closed = false;
  #onSettled: (() => void) | null = null;

  constructor(options: WorkspaceToolsOptions) {
    this.#clock = options.clock;
    this.#deadlineMs = options.deadlineMs ?? WORKSPACE_TOOL_LIMITS.deadline_ms_default;
    this.#threadsMax = options.threads ?? WORKSPACE_TOOL_LIMITS.threads_default;
    this.#abandonedMax = options.abandonedMax ?? WORKSPACE_TOOL_LIMITS.abandoned_max_default;
    for (const [name, value] of [
      ['deadlineMs', this.#deadlineMs],
      ['threads', this.#threadsMax],
      ['abandonedMax', this.#abandonedMax],
    ] as const) {
      if (!Number.isSafeInteger(value) || value < 1)
        throw new RangeError(`${name} must be a positive integer`);
    }
  }

  /** Threads abandoned and not yet exited. */
  get abandoned(): number {
    return this.#abandoned.size;
  }

  /** Never rejects. `session` is whose call it is; aborting `signal` answers `cancelled` at once. */
  run(request: WorkspaceToolRequest, signal: AbortSignal, session: string): Promise<WorkspaceToolOutcome> {
    const refused = this.#refusal(signal);
    if (refused) return Promise.resolve(refused);
    let work: WorkspaceToolJob;
    try {
      work = parseWorkspaceToolRequest(request);
    } catch (error) {
      return Promise.resolve(failed(workspaceToolErrorOf(error)));
    }
    return this.#submit(work, signal, session);
  }

  /**
   * Reads the beginning of the instructions file `name` at a workspace's root on a thread, like a call:
   * compact JSON of read-instructions.ts's window, or its refusal. Never rejects.
   */
  readInstructions(
    request: {
      workspace: ConfinedWorkspace | OwnFolder;
      excludedDirectories: readonly string[];
      name: string;
      length: number;
    },
    signal: AbortSignal,
    session: string,
  ): Promise<WorkspaceToolOutcome> {
    const refused = this.#refusal(signal);
    if (refused) return Promise.resolve(refused);
    const { workspace, excludedDirectories, name, length } = request;
    return this.#submit(
      {
        call: { tool: 'read_instructions', path: [name], length, followLink: true },
        workspace,
        excludedDirectories: [...excludedDirectories],
      },
      signal,
      session,
    );
  }

  #refusal(signal: AbortSignal): WorkspaceToolOutcome | null {
    if (signal.aborted) return failed('cancelled');
    if (this.#closed || this.#abandoned.size >= this.#abandonedMax) return failed('unavailable');
    return null;
  }

  #submit(work: WorkspaceToolJob, signal: AbortSignal, session: string): Promise<WorkspaceToolOutcome> {
    return new Promise((resolve) => {
      this.#nextId += 1;
      const job: Job = {
        id: this.#nextId,
        session,
        work,
        resolve,
        signal,
        onAbort: () => this.#giveUp(job, 'cancelled'),
        deadline: null,
        thread: null,
        settled: false,
      };
      job.deadline = deadlineAt(this.#clock, this.#clock.now() + this.#deadlineMs, () =>
        this.#giveUp(job, 'timed_out'),
      );
      signal.addEventListener('abort', job.onAbort, { once: true });
      const queue = this.#waiting.get(session);
      if (queue) queue.push(job);
      else this.#waiting.set(session, [job]);
      this.#dispatch();
    });
  }

  /** Stops every thread, waiting at most graceMs for work in progress; true when none was left blocked. */
  async close(graceMs: number): Promise<boolean> {
    this.#closed = true;
    for (const queue of this.#waiting.values()) {
      for (const job of queue) this.#settle(job, failed('unavailable'));
    }
    this.#waiting.clear();
    if (!this.#idle()) {
      await new Promise<void>((resolve) => {
        const timer = this.#clock.setTimeout(resolve, graceMs);
        this.#onSettled = () => {
          if (!this.#idle()) return;
          timer.cancel();
          resolve();
        };
      });
      this.#onSettled = null;
    }
    const drained = this.#idle();
    const stopping: Promise<unknown>[] = [];
    for (const thread of this.#threads) {
      if (thread.job) {
        this.#settle(thread.job, failed('unavailable'));
        this.#abandon(thread);
      } else {
        this.#threads.delete(thread);
        stopping.push(thread.worker.terminate());
      }
    }
    for (const worker of this.#abandoned) void worker.terminate();
    await Promise.all(stopping);
    return drained;
  }

  /** No call in progress and no abandoned thread alive. */
  #idle(): boolean {
    return this.#abandoned.size === 0 && ![...this.#threads].some((thread) => thread.job);
  }

  #dispatch(): void {
    for (;;) {
      const job = this.#nextJob();
      if (!job) return;
      // Its deadline timer or abort listener may not have run yet (several falling due together): no
      // thread is started for it.
      if (job.deadline && this.#clock.now() >= job.deadline.at) {
        this.#giveUp(job, 'timed_out');
        return;
      }
      if (job.signal.aborted) {
        this.#giveUp(job, 'cancelled');
        return;
      }
      const thread = [...this.#threads].find((candidate) => !candidate.job) ?? this.#startThread();
      if (!thread) return;
      this.#take(job);
      thread.job = job;
      job.thread = thread;
      this.#running.add(job.session);
      this.#dispatches += 1;
      this.#served.set(job.session, this.#dispatches);
      // A thread with a job keeps the process alive until it answers; an idle one does not.
      thread.worker.ref();
      thread.worker.postMessage({ id: job.id, job: job.work } satisfies WorkspaceToolMessage);
    }
  }

  /**
   * The first waiting call of the session served least recently among those with no call on a thread;
   * a session not served since it last had nothing to run comes first, in the order its calls arrived.
   */
  #nextJob(): Job | null {
    let next: Job | null = null;
    let nextServed = Number.POSITIVE_INFINITY;
    for (const [session, queue] of this.#waiting) {
      if (this.#running.has(session)) continue;
      const served = this.#served.get(session) ?? -1;
      if (served < nextServed) {
        next = queue[0]!;
        nextServed = served;
      }
    }
    return next;
  }

  /** Takes a waiting call off its session's queue. */
  #take(job: Job): void {
    const rest = (this.#waiting.get(job.session) ?? []).filter((queued) => queued !== job);
    if (rest.length > 0) this.#waiting.set(job.session, rest);
    else this.#waiting.delete(job.session);
    this.#forgetIfIdle(job.session);
  }

  /** A session's call left its thread. */
  #leave(session: string): void {
    this.#running.delete(session);
    this.#forgetIfIdle(session);
  }

  /** A session with nothing running or waiting is no longer remembered as served. */
  #forgetIfIdle(session: string): void {
    if (!this.#running.has(session) && !this.#waiting.has(session)) this.#served.delete(session);
  }

  #startThread(): ToolThread | null {
    if (this.#threads.size >= this.#threadsMax) return null;
    const thread: ToolThread = { worker: startModuleWorker(WORKER_URL), job: null };
    const { worker } = thread;
    worker.unref();
    worker.on('message', (answer: WorkspaceToolAnswer) => this.#answer(thread, answer));
    worker.on('error', () => this.#lose(thread));
    worker.on('exit', () => {
      if (this.#abandoned.delete(worker)) this.#onSettled?.();
      else this.#lose(thread);
    });
    this.#threads.add(thread);
    return thread;
  }

  #answer(thread: ToolThread, answer: WorkspaceToolAnswer): void {
    const job = thread.job;
    if (!job || job.id !== answer.id || !this.#threads.has(thread)) return;
    thread.job = null;
    this.#leave(job.session);
    thread.worker.unref();
    this.#settle(
      job,
      answer.ok ? { ok: true, output: answer.output } : failed(knownWorkspaceToolError(answer.code)),
    );
    this.#dispatch();
  }

  /** A thread that failed or exited on its own: its call fails, and a new thread serves the next. */
  #lose(thread: ToolThread): void {
    if (!this.#threads.delete(thread)) return;
    const job = thread.job;
    thread.job = null;
    void thread.worker.terminate();
    if (job) {
      this.#leave(job.session);
      this.#settle(job, failed('internal_error'));
    }
    this.#dispatch();
  }

  #giveUp(job: Job, code: 'timed_out' | 'cancelled'): void {
    if (job.settled) return;
    if (job.thread) this.#abandon(job.thread);
    else this.#take(job);
    this.#settle(job, failed(code));
    this.#dispatch();
  }

  #abandon(thread: ToolThread): void {
    this.#threads.delete(thread);
    if (thread.job) this.#leave(thread.job.session);
    thread.job = null;
    this.#abandoned.add(thread.worker);
    thread.worker.unref();
    void thread.worker.terminate();
  }

  #settle(job: Job, outcome: WorkspaceToolOutcome): void {
    if (job.settled) return;
    job.settled = true;
    job.deadline?.cancel();
    job.signal.removeEventListener('abort', job.onAbort);
    job.resolve(outcome);
    this.#onSettled?.();
  }
}
