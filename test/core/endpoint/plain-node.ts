import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

/**
 * Runs `node -e script ...args` without the test runner's NODE_OPTIONS hooks, which would make the
 * child write its own coverage files (impossible as another user). `env` execs node in place, so
 * the child's pid is the spawned pid.
 */
export function spawnPlainNode(script: string, args: readonly string[], options: SpawnOptions): ChildProcess {
  return spawn('/usr/bin/env', ['-u', 'NODE_OPTIONS', process.execPath, '-e', script, ...args], {
    ...options,
    env: {},
  });
}

/** The first line the child writes to stdout. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffered += chunk;
      const end = buffered.indexOf('\n');
      if (end !== -1) resolve(buffered.slice(0, end));
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => reject(new Error(`child exited (${code ?? signal}) before a line`)));
  });
}
