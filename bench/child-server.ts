import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface ChildServer {
  /** The Unix socket the child listens on. */
  readonly socketPath: string;
  readonly pid: number;
  /** Asks the child to exit (it closes its server first) and waits for it. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * Runs one of the bench's server scripts in its own process, so that it never shares an event loop
 * with the client. The child prints its socket path on its first stdout line when it is ready, and
 * exits when its stdin ends.
 */
export function startChildServer(
  script: string,
  options: { env?: Record<string, string>; nodeFlags?: string[] } = {},
): Promise<ChildServer> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', path], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  return serveFromChild(child, script);
}

/**
 * A child process that prints its socket path on its first stdout line when it is ready and exits when
 * its stdin ends, as a ChildServer; `what` names it in errors.
 */
export function serveFromChild(child: ChildProcess, what: string): Promise<ChildServer> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`${what} did not become ready`)), READY_TIMEOUT_MS);
    const onExit = (code: number | null) => fail(new Error(`${what} exited (${code}) before it was ready`));
    function fail(error: Error): void {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
    child.once('exit', onExit);
    child.once('error', fail);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', function onData(text: string) {
      output += text;
      const newline = output.indexOf('\n');
      if (newline === -1) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({ socketPath: output.slice(0, newline), pid: child.pid!, stop: () => stopChild(child) });
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin!.end();
  });
}
