import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import type { Clock } from '../clock.js';
import { CommandSandbox } from './command-runner.js';

export type SandboxProbe =
  | { available: true; bwrap: string }
  | { available: false; reason: 'not_installed' | 'cannot_start' };

const PROBE_TIMEOUT_MS = 10_000;
/** Prints `ok` only when the hidden file reads empty and the hidden directory lists nothing. */
const PROBE_COMMAND = 'cat hidden-file && ls -A hidden-directory && echo ok';

/**
 * Finds `bwrap` on `searchPath` (a PATH string) and runs one trivial sandboxed command with the real flags
 * to prove it starts; never throws. Empty and relative entries of the search path are skipped: they would
 * name whatever the daemon's working directory holds.
 */
export async function probeSandbox(options: { searchPath: string; clock: Clock }): Promise<SandboxProbe> {
  const bwrap = await findExecutable(options.searchPath, 'bwrap');
  if (bwrap === null) return { available: false, reason: 'not_installed' };
  return (await startsSandbox(bwrap, options.clock))
    ? { available: true, bwrap }
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

/** Runs the probe command in a throwaway workspace whose hidden file and directory have content. */
async function startsSandbox(bwrap: string, clock: Clock): Promise<boolean> {
  let root: string | undefined;
  try {
    root = await mkdtemp(join(tmpdir(), 'magi-sandbox-probe-'));
    const workspace = join(root, 'workspace');
    const hiddenFile = join(workspace, 'hidden-file');
    const hiddenDirectory = join(workspace, 'hidden-directory');
    await mkdir(hiddenDirectory, { recursive: true });
    await writeFile(hiddenFile, 'visible\n');
    await writeFile(join(hiddenDirectory, 'visible'), 'visible\n');
    const sandbox = new CommandSandbox({ bwrap, clock, hiddenPaths: [hiddenFile, hiddenDirectory] });
    try {
      const outcome = await sandbox.run({
        command: PROBE_COMMAND,
        workspace,
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
