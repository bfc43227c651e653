import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Clock, systemClock } from '../core/clock.js';

/** How long a launched daemon may take to print its ready line (from sources it compiles on the fly). */
const READY_TIMEOUT_MS = 30_000;

export interface LaunchOptions {
  home: string;
  socket: string;
  /** More `magid serve` flags, e.g. `['--provider-base-url', url, '--model', name]`. */
  serveArgs?: readonly string[];
  readyTimeoutMs?: number;
  /** The time the ready timeout is read from. */
  clock?: Clock;
}

/** A daemon this process started. */
export interface LaunchedDaemon {
  readonly pid: number;
  readonly socket: string;
  readonly instanceId: string;
  /** Asks it to drain (SIGTERM) and waits until it has exited. */
  stop(): Promise<void>;
}

/** The daemon did not print its ready line: it exited first, or it took too long. */
export class LaunchError extends Error {
  override readonly name = 'LaunchError';
  readonly reason: 'exited' | 'timed_out' | 'not_found';
  constructor(reason: 'exited' | 'timed_out' | 'not_found') {
    super(
      {
        exited: 'the daemon exited before it was ready',
        timed_out: 'the daemon was not ready in time',
        not_found: 'no magid was found beside the client library',
      }[reason],
    );
    this.reason = reason;
  }
}

/**
 * The `magid` installed beside this library: the compiled `bin/magid.js` next to a built package,
 * else the TypeScript sources run through tsx (a source checkout).
 */
export function magidCommand(): { args: string[]; cwd: string } {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const compiled = join(root, 'bin', 'magid.js');
  if (existsSync(compiled)) return { args: [compiled], cwd: root };
  const sources = join(root, 'bin', 'magid.ts');
  if (existsSync(sources)) return { args: ['--import', 'tsx', sources], cwd: root };
  throw new LaunchError('not_found');
}

/**
 * Starts `magid serve --home H --socket S` detached, its log appended to `<home>/magid.log`, and waits
 * for its ready line. It outlives this process unless stopped.
 */
export async function launchDaemon(options: LaunchOptions): Promise<LaunchedDaemon> {
  const { args, cwd } = magidCommand();
  mkdirSync(options.home, { recursive: true, mode: 0o700 });
  const log = openSync(join(options.home, 'magid.log'), 'a', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(
      process.execPath,
      [...args, 'serve', '--home', options.home, '--socket', options.socket, ...(options.serveArgs ?? [])],
      { cwd, detached: true, stdio: ['ignore', 'pipe', log] },
    );
  } finally {
    closeSync(log);
  }
  const exited = once(child, 'exit');
  const ready = await readyLine(
    child,
    options.readyTimeoutMs ?? READY_TIMEOUT_MS,
    options.clock ?? systemClock,
  );
  child.stdout?.destroy();
  child.unref();
  return {
    pid: child.pid!,
    socket: ready.socket,
    instanceId: ready.instance_id,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Waiting for the exit must keep this process alive, unlike the daemon's mere existence.
      child.ref();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

interface ReadyLine {
  ready: true;
  socket: string;
  instance_id: string;
}

function readyLine(child: ChildProcess, timeoutMs: number, clock: Clock): Promise<ReadyLine> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (reason: 'exited' | 'timed_out') => {
      timer.cancel();
      lines.close();
      if (reason === 'timed_out') child.kill('SIGTERM');
      reject(new LaunchError(reason));
    };
    const timer = clock.setTimeout(() => fail('timed_out'), timeoutMs);
    const onExit = () => fail('exited');
    child.once('exit', onExit);
    lines.on('line', (line) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof parsed === 'object' && parsed !== null && (parsed as { ready?: unknown }).ready === true) {
        timer.cancel();
        child.off('exit', onExit);
        lines.close();
        resolve(parsed as ReadyLine);
      }
    });
  });
}
