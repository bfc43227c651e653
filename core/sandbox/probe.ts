import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Clock } from '../clock.js';
import { ownFolder } from '../confinement/confined-workspace.js';
import { type CommandSandbox, type LimitProcess, CommandSandbox as Sandbox } from './command-runner.js';
import type { ResourceControl } from './resource-control.js';
import { COMMAND_PATH, type SandboxView } from './sandbox-view.js';
import { commandSeccompProgram, type SeccompArchitecture, seccompArchitecture } from './seccomp-filter.js';
import { resolveSystemCovers } from './system-covers.js';

export type SandboxUnavailableReason = 'not_installed' | 'cannot_start' | 'unsupported_architecture';

export type SandboxProbe =
  | { available: true; bwrap: string; architecture: SeccompArchitecture }
  | { available: false; reason: SandboxUnavailableReason };

const PROBE_TIMEOUT_MS = 10_000;
/** Prints `ok` only when the covered file reads empty and the covered folder lists nothing. */
const PROBE_COMMAND = 'cat .env && ls -A .ssh && echo ok';

const RLIMITS_ONLY: ResourceControl = {
  enforcedBy: 'rlimit',
  group: async () => null,
  close: async () => {},
};

export interface ProbeOptions {
  /** A PATH string. */
  searchPath: string;
  clock: Clock;
  /** `process.arch`: the seccomp filter is written for x64 and arm64 only. */
  arch: string;
  limitProcess: LimitProcess;
}

/**
 * Finds `bwrap` on the search path and runs one trivial command with the real flags (the seccomp filter,
 * the covers, the gate and its rlimits) to prove it starts; never throws. Empty and relative entries of the
 * search path are skipped: they would name whatever the daemon's working directory holds.
 */
export async function probeSandbox(options: ProbeOptions): Promise<SandboxProbe> {
  const architecture = seccompArchitecture(options.arch);
  if (architecture === null) return { available: false, reason: 'unsupported_architecture' };
  const bwrap = await findExecutable(options.searchPath, 'bwrap');
  if (bwrap === null) return { available: false, reason: 'not_installed' };
  return (await startsSandbox(bwrap, architecture, options))
    ? { available: true, bwrap, architecture }
    : { available: false, reason: 'cannot_start' };
}

async function findExecutable(searchPath: string, name: string): Promise<string | null> {
  for (const directory of searchPath.split(delimiter)) {
    if (!isAbsolute(directory)) continue;
    const candidate = join(directory, name);
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Runs the probe command in a throwaway workspace whose covered file and folder have content. */
async function startsSandbox(
  bwrap: string,
  architecture: SeccompArchitecture,
  options: ProbeOptions,
): Promise<boolean> {
  let root: string | undefined;
  try {
    root = await mkdtemp(join(tmpdir(), 'magi-sandbox-probe-'));
    const workspace = join(root, 'workspace');
    await mkdir(join(workspace, '.ssh'), { recursive: true });
    await writeFile(join(workspace, '.env'), 'visible\n');
    await writeFile(join(workspace, '.ssh', 'id_ed25519'), 'visible\n');
    const view: SandboxView = {
      daemonHome: join(root, 'home'),
      socket: null,
      userHome: null,
      emptied: [],
      readable: [],
      credentialPaths: [],
      commandPath: COMMAND_PATH,
      skipped: [],
      system: await resolveSystemCovers(),
    };
    const sandbox: CommandSandbox = new Sandbox({
      bwrap,
      clock: options.clock,
      view,
      seccomp: commandSeccompProgram(architecture),
      control: RLIMITS_ONLY,
      bounds: { memoryBytes: 2 ** 31, processes: 256 },
      limitProcess: options.limitProcess,
      coverDirectory: join(root, 'covers'),
      concurrent: 1,
    });
    try {
      const outcome = await sandbox.run({
        command: PROBE_COMMAND,
        workspace: ownFolder(workspace),
        session: 'probe',
        timeoutMs: PROBE_TIMEOUT_MS,
        signal: new AbortController().signal,
      });
      return outcome.exitCode === 0 && outcome.output === 'ok\n';
    } finally {
      await sandbox.close();
    }
  } catch {
    return false;
  } finally {
    if (root !== undefined) await rm(root, { recursive: true, force: true }).catch(() => {});
  }
}
