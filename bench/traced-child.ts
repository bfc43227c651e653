import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type ChildServer, serveFromChild } from './child-server.js';

/** A child server under strace; its `pid` is strace's. */
export interface TracedChild extends ChildServer {
  /** How many of the traced system calls the child has made so far, its threads included. */
  calls(): number;
}

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
  return serveFromChild(child, `${script} under strace`).then((server) => ({ ...server, calls }));
}
