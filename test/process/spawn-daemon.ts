import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { WireClient } from '../../client/wire-client.js';
import { magidArguments, PROJECT_ROOT } from '../helpers/magid-command.js';
import { WITHOUT_TEST_HOOKS } from '../helpers/without-test-hooks.js';

export { PROJECT_ROOT };

/** How long a daemon may take to print its ready line (TypeScript is compiled on the fly). */
const READY_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 10_000;

export interface ReadyLine {
  ready: true;
  socket: string;
  pid: number;
  instance_id: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface Tap {
  teardown(fn: () => unknown): void;
}

/** This process's environment without NODE_OPTIONS, so the test runner's hooks stay out of children. */
export function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

/** A fresh directory with a short path (a socket path must stay under 108 bytes), removed afterwards. */
export function shortTempDir(t: Tap): string {
  const dir = mkdtempSync('/tmp/mp-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A `magid` child process with its whole stdout and stderr kept as text. */
export class MagidProcess {
  readonly child: ChildProcess;
  /** Settles once the process exited and its output streams closed. */
  readonly exited: Promise<Exit>;
  #stdout = '';
  #stderr = '';
  #done = false;

  constructor(child: ChildProcess) {
    this.child = child;
    child.stdout?.setEncoding('utf8');
    child.stderr?.setEncoding('utf8');
    child.stdout?.on('data', (text: string) => {
      this.#stdout += text;
    });
    child.stderr?.on('data', (text: string) => {
      this.#stderr += text;
    });
    this.exited = new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code, signal) => {
        this.#done = true;
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  get stdout(): string {
    return this.#stdout;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** False once the process exited and its output was read to the end. */
  get running(): boolean {
    return !this.#done;
  }

  /** The exit, or a rejection naming the process when it takes longer than `timeoutMs`. */
  waitExit(timeoutMs = EXIT_TIMEOUT_MS): Promise<Exit> {
    return withTimeout(this.exited, timeoutMs, `magid (pid ${this.pid}) to exit`);
  }

  /** The first complete stdout line; rejects if the process ends first or nothing comes in time. */
  firstLine(timeoutMs = READY_TIMEOUT_MS): Promise<string> {
    const line = new Promise<string>((resolve, reject) => {
      const check = () => {
        const end = this.#stdout.indexOf('\n');
        if (end === -1) return false;
        resolve(this.#stdout.slice(0, end));
        return true;
      };
      if (check()) return;
      const onData = () => {
        if (check()) this.child.stdout?.off('data', onData);
      };
      this.child.stdout?.on('data', onData);
      void this.exited.then((exit) => {
        if (!check()) {
          reject(new Error(`magid exited (${exit.code ?? exit.signal}) before a line: ${this.#stderr}`));
        }
      });
    });
    return withTimeout(line, timeoutMs, `a stdout line from magid (pid ${this.pid})`);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Runs `magid <args>` from the TypeScript sources as a direct child (its pid is the daemon's pid);
 * a process still running when the test ends is killed. Its stdin is a pipe only when asked for.
 */
export function runMagid(
  t: Tap,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  stdin: 'ignore' | 'pipe' = 'ignore',
  nodeArgs: readonly string[] = [],
): MagidProcess {
  const child = spawn('/usr/bin/env', [...WITHOUT_TEST_HOOKS, ...nodeArgs, ...magidArguments(), ...args], {
    cwd: PROJECT_ROOT,
    env: { ...childEnv(), ...env },
    stdio: [stdin, 'pipe', 'pipe'],
  });
  const magid = new MagidProcess(child);
  t.teardown(async () => {
    if (!magid.running) return;
    child.kill('SIGKILL');
    await magid.exited;
  });
  return magid;
}

export interface StartedDaemon {
  magid: MagidProcess;
  ready: ReadyLine;
}

/**
 * `magid serve --socket <socket> --home <home> ...args` (without `--socket` when it is null: the default
 * socket), with `env` over the test's environment, once it printed its ready line.
 */
export async function startDaemon(
  t: Tap,
  options: {
    socket: string | null;
    home: string;
    args?: readonly string[];
    nodeArgs?: readonly string[];
    env?: NodeJS.ProcessEnv;
  },
): Promise<StartedDaemon> {
  const socket = options.socket === null ? [] : ['--socket', options.socket];
  const magid = runMagid(
    t,
    ['serve', ...socket, '--home', options.home, ...(options.args ?? [])],
    options.env ?? {},
    'ignore',
    options.nodeArgs,
  );
  const ready = JSON.parse(await magid.firstLine()) as ReadyLine;
  return { magid, ready };
}

export interface StdioDaemon {
  magid: MagidProcess;
  /** Writes to the daemon's stdin and reads its stdout; `close()` ends its stdin. */
  client: WireClient;
}

/**
 * `magid stdio --home <home> ...args`, with a wire client on its stdin and stdout, once it logged that
 * it serves (stdio has no ready line: stdout carries frames only).
 */
export async function startStdio(
  t: Tap,
  options: { home: string; args?: readonly string[] },
): Promise<StdioDaemon> {
  const magid = runMagid(t, ['stdio', '--home', options.home, ...(options.args ?? [])], {}, 'pipe');
  const { stdin, stdout } = magid.child;
  // A write racing the daemon's exit fails with EPIPE; the test then sees the exit itself.
  stdin!.on('error', () => {});
  const client = new WireClient({ write: (line) => stdin!.write(line), end: () => stdin!.end() });
  stdout!.on('data', (text: string) => client.receive(text));
  stdout!.on('close', () => client.closedByPeer());
  await logged(magid, 'serving stdio');
  return { magid, client };
}

/** The stderr lines that are JSON objects (pino's), parsed. */
export function logLines(stderr: string): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // A line that only looks like JSON is not a pino line.
    }
  }
  return lines;
}

/** Waits (in real time, bounded) until the daemon's stderr carries the log line `message`. */
export async function logged(
  magid: MagidProcess,
  message: string,
  timeoutMs = READY_TIMEOUT_MS,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = logLines(magid.stderr).find((entry) => entry.msg === message);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the log line "${message}"`);
    await sleep(20);
  }
}
