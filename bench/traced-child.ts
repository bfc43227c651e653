import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChildServer } from './child-server.js';

/** A child server under strace; its `pid` is strace's. */
export interface TracedChild extends ChildServer {
  /** How many of the traced system calls the child has made so far, its threads included. */
  calls(): number;
}

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** Why strace cannot be used here, or null when it runs. */
export function straceUnavailable(): string | null {
  const probe = spawnSync('strace', ['-V'], { stdio: 'ignore' });
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return 'strace missing';
  if (probe.error) return probe.error.message;
  return probe.status === 0 ? null : `strace -V exited ${probe.status}`;
}

/**
 * Runs one of the bench's server scripts as bench/child-server.ts does (ready when it prints its socket
 * path, stopped by ending its stdin), but under `strace -f`, writing each of `syscalls` (and only those:
 * `--seccomp-bpf` stops the child on nothing else) to `traceFile` as it happens, so that the calls of a
 * window are the difference of two counts.
 */
export function startTracedChild(
  script: string,
  syscalls: readonly string[],
  traceFile: string,
  env: Record<string, string>,
): Promise<TracedChild> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(
    'strace',
    [
      '-f',
      '--seccomp-bpf',
      '-qq',
      '-e',
      `trace=${syscalls.join(',')}`,
      '-e',
      'signal=none',
      '-o',
      traceFile,
      process.execPath,
      '--import',
      'tsx',
      path,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env } },
  );
  const call = new RegExp(`\\b(${syscalls.join('|')})\\(`);
  const calls = () =>
    readFileSync(traceFile, 'utf8')
      .split('\n')
      .filter((line) => call.test(line)).length;
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`${script} under strace did not become ready`)),
      READY_TIMEOUT_MS,
    );
    const onExit = (code: number | null) =>
      fail(new Error(`strace or ${script} exited (${code}) before it was ready`));
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
      resolve({
        socketPath: output.slice(0, newline),
        pid: child.pid!,
        calls,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.stdin!.end();
          }),
      });
    });
  });
}
