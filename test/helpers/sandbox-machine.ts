import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { systemClock } from '../../core/clock.js';
import { nativeAddon } from '../../core/endpoint/native.js';
import {
  CommandSandbox,
  type CommandSandboxOptions,
  commandSeccompProgram,
  probeSandbox,
  resolveSandboxView,
  type SandboxView,
} from '../../core/sandbox/command-sandbox.js';
import type { ResourceControl } from '../../core/sandbox/resource-control.js';
import { seccompArchitecture } from '../../core/sandbox/seccomp-filter.js';
import { fakeClock } from './fake-clock.js';

interface Tap {
  teardown(fn: () => unknown): void;
}

const probe = await probeSandbox({
  searchPath: process.env.PATH ?? '',
  clock: systemClock,
  arch: process.arch,
  limitProcess: nativeAddon().limitProcess,
});

/** The `bwrap` this machine can run sandboxes with, or null. */
export const bwrap: string | null = probe.available ? probe.bwrap : null;

/** Why this machine cannot run the sandbox, as its probe found, or null when it can. */
export const sandboxUnavailable: string | null = probe.available
  ? null
  : {
      not_installed: 'bwrap is not on the search path',
      cannot_start: 'bwrap is installed but cannot start a sandbox here (user namespaces may be forbidden)',
      unsupported_architecture: 'the seccomp filter has no program for this architecture',
    }[probe.reason];

/**
 * A fresh directory on the root filesystem, which the sandbox binds read-only. Not under /tmp: the sandbox
 * mounts its own /tmp, so a write there would vanish for another reason than the read-only root.
 */
export async function rootDirectory(t: Tap): Promise<string> {
  const directory = await mkdtemp('/var/tmp/magi-sandbox-test-');
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/**
 * The ids of processes whose command line, its arguments joined by spaces, contains `marker` (or is it
 * exactly: the command itself, not the shells and the sandbox that carry it in their arguments). Test
 * files run side by side, so a marker belongs to one file (test/helpers/process-markers.test.ts).
 */
export async function processesWith(marker: string, exact = false): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').join(' ');
      if (exact ? commandLine.trimEnd() === marker : commandLine.includes(marker)) found.push(Number(entry));
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

/** Waits, in real time, until a process runs exactly `marker` (the sandboxed command itself has started). */
export async function processStarted(marker: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await processesWith(marker, true)).length === 0) {
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

/** Bounds a command by rlimits alone, as on a machine where no cgroup can be made. */
export const RLIMITS_ONLY: ResourceControl = {
  enforcedBy: 'rlimit',
  group: async () => null,
  close: async () => {},
};

export interface TestSandboxOptions extends Partial<Omit<CommandSandboxOptions, 'view'>> {
  /** Replaces parts of the view resolved for a daemon without a user's home, socket or readable paths. */
  view?: Partial<SandboxView>;
}

/**
 * The options of a command sandbox on the real bwrap with the real seccomp filter, bounded by rlimits alone
 * and on a fake clock unless told otherwise, its daemon home and covers in a fresh folder.
 */
export async function testSandboxOptions(
  t: Tap,
  options: TestSandboxOptions = {},
): Promise<CommandSandboxOptions> {
  const { view, ...rest } = options;
  const root = await rootDirectory(t);
  const resolved = await resolveSandboxView({
    daemonHome: join(root, 'magi'),
    socketPath: null,
    userHome: null,
    runtimeDirectory: null,
    readablePaths: [],
    searchPath: '',
  });
  return {
    bwrap: bwrap ?? '/nonexistent/bwrap',
    clock: fakeClock(),
    view: { ...resolved, ...view },
    seccomp: commandSeccompProgram(seccompArchitecture(process.arch) ?? 'x64'),
    control: RLIMITS_ONLY,
    bounds: { memoryBytes: 2 ** 31, processes: 256 },
    limitProcess: nativeAddon().limitProcess,
    coverDirectory: join(root, 'covers'),
    concurrent: 1,
    ...rest,
  };
}

/** A command sandbox made of testSandboxOptions, closed when the test ends. */
export async function testSandbox(t: Tap, options: TestSandboxOptions = {}): Promise<CommandSandbox> {
  const sandbox = new CommandSandbox(await testSandboxOptions(t, options));
  t.teardown(() => sandbox.close());
  return sandbox;
}
