import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../core/clock.js';
import { ownFolder } from '../core/confinement/confined-workspace.js';
import { nativeAddon } from '../core/endpoint/native.js';
import {
  COMMAND_BOUNDS,
  CommandSandbox,
  commandSeccompProgram,
  probeSandbox,
  resolveSandboxView,
  resourceControl,
} from '../core/sandbox/command-sandbox.js';

/** The sandbox of the bench, set up as the daemon sets up its own, and a timed command in it. */
export interface BenchSandbox {
  /** How the commands' memory and processes are bounded here: cgroup_v1, cgroup_v2 or rlimit. */
  enforcedBy: string;
  /** Runs `true` in the workspace and gives its wall time in milliseconds; throws if it did not exit 0. */
  time(workspace: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * A CommandSandbox on this machine's bwrap, with the daemon's default bounds, cgroups where the daemon would
 * make them, the user's real home and a throwaway daemon home under `directory`: what `run_command` runs
 * through, less the turn around it. Null when no sandbox can run here.
 */
export async function benchSandbox(directory: string): Promise<BenchSandbox | null> {
  const limitProcess = nativeAddon().limitProcess;
  const searchPath = process.env.PATH ?? '/usr/bin:/bin';
  const probe = await probeSandbox({ searchPath, clock: systemClock, arch: process.arch, limitProcess });
  if (!probe.available) return null;
  const daemonHome = join(directory, 'daemon-home');
  mkdirSync(daemonHome, { recursive: true, mode: 0o700 });
  const view = await resolveSandboxView({
    daemonHome,
    socketPath: null,
    userHome: homedir(),
    runtimeDirectory: null,
    readablePaths: [],
    searchPath,
  });
  const bounds = {
    memoryBytes: COMMAND_BOUNDS.memory_bytes_default,
    processes: COMMAND_BOUNDS.processes_default,
  };
  const control = await resourceControl(bounds, systemClock);
  const sandbox = new CommandSandbox({
    bwrap: probe.bwrap,
    clock: systemClock,
    view,
    seccomp: commandSeccompProgram(probe.architecture),
    control,
    bounds,
    limitProcess,
    coverDirectory: join(daemonHome, 'run', 'sandbox'),
  });
  await sandbox.sweep();
  const signal = new AbortController().signal;
  return {
    enforcedBy: control.enforcedBy,
    async time(workspace) {
      const started = performance.now();
      const outcome = await sandbox.run({
        command: 'true',
        workspace: ownFolder(workspace),
        session: 'bench',
        timeoutMs: 600_000,
        signal,
      });
      const elapsed = performance.now() - started;
      if (outcome.exitCode !== 0) throw new Error(`true exited ${outcome.exitCode} (${outcome.signal})`);
      return elapsed;
    },
    close: () => sandbox.close(),
  };
}
