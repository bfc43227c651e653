import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';

/** A path the command must not see, as it exists now: a directory is covered whole, anything else by an empty file. */
export interface HiddenEntry {
  path: string;
  kind: 'directory' | 'file';
}

/** What one command's sandbox mounts, every path resolved through its symlinks. */
export interface SandboxLayout {
  workspace: string;
  /** Hidden paths outside the workspace or above it, covered before the workspace is bound. */
  hiddenAround: HiddenEntry[];
  /** Hidden paths inside the workspace, covered after it is bound so the bind does not reveal them. */
  hiddenWithin: HiddenEntry[];
}

export class WorkspaceUnavailable extends Error {
  constructor() {
    super('the workspace is not an existing directory');
    this.name = 'WorkspaceUnavailable';
  }
}

/**
 * Resolves the workspace and every hidden path that exists. A path that does not exist is left out: there
 * is nothing to hide, and bwrap could not cover it on the read-only root.
 */
export async function resolveLayout(
  workspace: string,
  hiddenPaths: readonly string[],
): Promise<SandboxLayout> {
  const real = await realDirectory(workspace);
  const entries = await Promise.all(hiddenPaths.map(hiddenEntry));
  const layout: SandboxLayout = { workspace: real, hiddenAround: [], hiddenWithin: [] };
  const seen = new Set<string>();
  for (const entry of entries) {
    if (entry === null || seen.has(entry.path)) continue;
    seen.add(entry.path);
    if (isStrictlyInside(entry.path, real)) layout.hiddenWithin.push(entry);
    else layout.hiddenAround.push(entry);
  }
  return layout;
}

async function realDirectory(path: string): Promise<string> {
  try {
    const real = await realpath(path);
    if ((await stat(real)).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new WorkspaceUnavailable();
}

async function hiddenEntry(path: string): Promise<HiddenEntry | null> {
  try {
    const real = await realpath(path);
    const kind = (await stat(real)).isDirectory() ? 'directory' : 'file';
    return { path: real, kind };
  } catch {
    return null;
  }
}

function isStrictlyInside(path: string, directory: string): boolean {
  const prefix = directory.endsWith(sep) ? directory : directory + sep;
  return path.startsWith(prefix);
}
