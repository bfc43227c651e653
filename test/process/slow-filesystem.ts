import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The FUSE server: a raw /dev/fuse protocol loop in Python's standard library. */
const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'slow-fuse.py');
const PROBE_TIMEOUT_MS = 10_000;
const MOUNT_TIMEOUT_MS = 10_000;
const SIGNAL_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

/** A regular file in the slow filesystem's root; a `never` file's reads are never answered. */
export interface SlowFile {
  name: string;
  content: string;
  never?: boolean;
}

interface Tap {
  teardown(fn: () => unknown): void;
}

let unavailable: string | null | undefined;

/**
 * Why this machine cannot mount the slow filesystem (not root, no /dev/fuse, the kernel refuses the
 * mount), or null when it can. A real mount is tried once; the answer is kept for the process.
 */
export function slowFilesystemUnavailable(): string | null {
  if (unavailable === undefined) unavailable = probe();
  return unavailable;
}

function probe(): string | null {
  if (process.getuid?.() !== 0) return 'mounting a FUSE filesystem needs root';
  try {
    accessSync('/dev/fuse', constants.R_OK | constants.W_OK);
  } catch (error) {
    return `/dev/fuse cannot be opened (${(error as NodeJS.ErrnoException).code})`;
  }
  const target = mkdtempSync('/tmp/mp-fuse-');
  try {
    const result = spawnSync('python3', [SERVER, '--probe', target], {
      encoding: 'utf8',
      timeout: PROBE_TIMEOUT_MS,
    });
    if (result.error) return `python3 cannot run the FUSE server: ${result.error.message}`;
    if (result.status !== 0) {
      return `the kernel refused a FUSE mount: ${result.stderr.trim() || `exit ${result.status ?? result.signal}`}`;
    }
    return null;
  } finally {
    unmountLazily(target);
    rmdirSync(target);
  }
}

/** Whether something is mounted at exactly `path` in this process's mount namespace. */
export function mountedAt(path: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[4] === path);
}

function unmountLazily(path: string): void {
  if (mountedAt(path)) spawnSync('umount', ['-l', path], { timeout: STOP_TIMEOUT_MS });
}

/**
 * A mounted slow filesystem: every read of a file's bytes waits until the test releases it, so a test
 * can hold a reader (a daemon's capture) inside the kernel for as long as it likes.
 */
export class SlowFilesystem {
  /** The mount point, which is the filesystem's root directory. */
  readonly root: string;
  readonly #server: ChildProcess;
  readonly #exited: Promise<void>;
  readonly #lines = new Map<string, string[]>();
  #waiters: Array<{ kind: string; resolve: (value: string) => void; reject: (error: Error) => void }> = [];
  #stderr = '';
  #stdout = '';
  #running = true;
  #closing: Promise<void> | undefined;

  constructor(root: string, files: readonly SlowFile[]) {
    this.root = root;
    this.#server = spawn('python3', [SERVER, root, JSON.stringify(files)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.#server.stdout?.setEncoding('utf8');
    this.#server.stderr?.setEncoding('utf8');
    this.#server.stdout?.on('data', (text: string) => this.#receive(text));
    this.#server.stderr?.on('data', (text: string) => {
      this.#stderr += text;
    });
    this.#server.stdin?.on('error', () => {});
    this.#exited = new Promise((resolve) => {
      this.#server.once('error', (error) => {
        this.#stderr += error.message;
        this.#ended();
        resolve();
      });
      this.#server.once('close', () => {
        this.#ended();
        resolve();
      });
    });
  }

  /** Resolves once the kernel answers a stat of the root through the server. */
  async mounted(): Promise<void> {
    await this.#next('mounted', MOUNT_TIMEOUT_MS);
    const live = await withTimeout(stat(this.root), MOUNT_TIMEOUT_MS, 'the slow filesystem to answer');
    if (live.dev === statSync(dirname(this.root)).dev || !mountedAt(this.root)) {
      throw new Error(`the slow filesystem is not mounted at ${this.root}`);
    }
  }

  /** The name of the next file whose read the server holds, in the order the reads arrived. */
  waitForRead(timeoutMs = SIGNAL_TIMEOUT_MS): Promise<string> {
    return this.#next('read-waiting', timeoutMs);
  }

  /** The name of the next file whose held read the kernel gave up (its reader was interrupted). */
  waitForInterrupt(timeoutMs = SIGNAL_TIMEOUT_MS): Promise<string> {
    return this.#next('read-interrupted', timeoutMs);
  }

  /** Answers every held read except those of `never` files; resolves with how many were answered. */
  async release(timeoutMs = SIGNAL_TIMEOUT_MS): Promise<number> {
    this.#server.stdin?.write('release\n');
    return Number(await this.#next('released', timeoutMs));
  }

  /**
   * Detaches the mount and stops the server, which fails any read still held; a server that does not
   * stop is killed and the mount detached with `umount -l`. Also runs at the test's teardown.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#server.stdin?.end();
      try {
        await withTimeout(this.#exited, STOP_TIMEOUT_MS, 'the slow filesystem server to stop');
      } catch {
        this.#server.kill('SIGKILL');
        await this.#exited;
      }
      unmountLazily(this.root);
      rmdirSync(this.root);
    })();
    return this.#closing;
  }

  #receive(text: string): void {
    this.#stdout += text;
    let end = this.#stdout.indexOf('\n');
    while (end !== -1) {
      const line = this.#stdout.slice(0, end);
      this.#stdout = this.#stdout.slice(end + 1);
      const space = line.indexOf(' ');
      const kind = space === -1 ? line : line.slice(0, space);
      const value = space === -1 ? '' : line.slice(space + 1);
      const waiter = this.#waiters.find((w) => w.kind === kind);
      if (waiter) {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        waiter.resolve(value);
      } else this.#lines.set(kind, [...(this.#lines.get(kind) ?? []), value]);
      end = this.#stdout.indexOf('\n');
    }
  }

  #ended(): void {
    this.#running = false;
    for (const waiter of this.#waiters) waiter.reject(this.#stoppedError());
    this.#waiters = [];
  }

  #stoppedError(): Error {
    return new Error(`the slow filesystem server stopped: ${this.#stderr.trim() || 'no message'}`);
  }

  #next(kind: string, timeoutMs: number): Promise<string> {
    const queued = this.#lines.get(kind);
    if (queued?.length) return Promise.resolve(queued.shift()!);
    if (!this.#running) return Promise.reject(this.#stoppedError());
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`timed out waiting for "${kind}" from the slow filesystem`));
      }, timeoutMs);
      const waiter = {
        kind,
        resolve: (value: string) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.#waiters.push(waiter);
    });
  }
}

/** Mounts `files` on a fresh directory under /tmp; the test's teardown unmounts it whatever happens. */
export async function mountSlowFilesystem(t: Tap, files: readonly SlowFile[]): Promise<SlowFilesystem> {
  const filesystem = new SlowFilesystem(mkdtempSync('/tmp/mp-fuse-'), files);
  t.teardown(() => filesystem.close());
  await filesystem.mounted();
  return filesystem;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
