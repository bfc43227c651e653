import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../core/clock.js';
import { probeSandbox } from '../../core/sandbox/command-sandbox.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

const probe = await probeSandbox({ searchPath: process.env.PATH ?? '', clock: systemClock });

/** The `bwrap` this machine can run sandboxes with, or null. */
export const bwrap: string | null = probe.available ? probe.bwrap : null;

/** Why this machine cannot run the sandbox, as its probe found, or null when it can. */
export const sandboxUnavailable: string | null = probe.available
  ? null
  : probe.reason === 'not_installed'
    ? 'bwrap is not on the search path'
    : 'bwrap is installed but cannot start a sandbox here (user namespaces may be forbidden)';

/**
 * A fresh directory on the root filesystem, which the sandbox binds read-only. Not under /tmp: the sandbox
 * mounts its own /tmp, so a write there would vanish for another reason than the read-only root.
 */
export async function rootDirectory(t: Tap): Promise<string> {
  const directory = await mkdtemp('/var/tmp/magi-sandbox-test-');
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** The ids of processes whose command line, its arguments joined by spaces, contains `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ');
      if (commandLine.includes(marker)) found.push(Number(entry));
    } catch {
      // the process ended while the list was read
    }
  }
  return found;
}

/**
 * The processes still carrying `marker` once they had up to `timeoutMs` to go: a process the kernel is
 * killing with its PID namespace may still be listed for a moment after the sandbox's own exit.
 */
export async function processesLeft(marker: string, timeoutMs = 5_000): Promise<number[]> {
  const until = Date.now() + timeoutMs;
  let left = await processesWith(marker);
  while (left.length > 0 && Date.now() < until) {
    await sleep(20);
    left = await processesWith(marker);
  }
  return left;
}

/** Waits, in real time, until some process carries `marker` (the sandboxed command has started). */
export async function processStarted(marker: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await processesWith(marker)).length === 0) {
    if (Date.now() > until) throw new Error(`no process carrying ${marker} started`);
    await sleep(20);
  }
}

/** Kills, when the test ends, any process still carrying one of `markers`: a sandbox that failed to. */
export function killOnTeardown(t: Tap, ...markers: string[]): void {
  t.teardown(async () => {
    for (const marker of markers) {
      for (const pid of await processesWith(marker)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
}

export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
