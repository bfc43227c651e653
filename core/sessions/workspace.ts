import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, normalize, sep } from 'node:path';
import type { HiddenPlaces } from '../confinement/hidden-places.js';
import { WireError } from '../errors.js';
import { SERVICE_LIMITS } from '../limits.js';

/** A workspace `session.create` accepted: its path, and the real path and identity it is pinned by. */
export interface CheckedWorkspace {
  workspace: string;
  real: string;
  identity: { dev: string; ino: string };
}

/**
 * A session's workspace: an absolute, normalized path of an existing directory that a command sandbox can
 * confine. Its real path (every symlink followed) must not be the filesystem root, the daemon's home or a
 * folder inside that home, nor a place no tool may read (a credential folder of the user's home, the
 * system's secrets): there a workspace would uncover what every tool must not reach. The folder is pinned
 * by that real path and its identity, which the tools check again, by descriptor, at every call.
 */
export async function checkWorkspace(
  path: string,
  daemonHome: string,
  hidden: HiddenPlaces,
): Promise<CheckedWorkspace> {
  if (
    !isAbsolute(path) ||
    path.includes('\0') ||
    Buffer.byteLength(path) > SERVICE_LIMITS.workspace_path_bytes
  ) {
    throw new WireError('invalid_payload', 'the workspace must be an absolute path');
  }
  const normalized = normalize(path);
  const workspace = normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
  const found = await realDirectory(workspace);
  if (found === null) throw new WireError('invalid_payload', 'the workspace must be an existing directory');
  const { real } = found;
  if (real === sep) throw new WireError('invalid_payload', 'the workspace cannot be the filesystem root');
  const home = (await realDirectory(daemonHome))?.real ?? daemonHome;
  if (real === home || real.startsWith(home.endsWith(sep) ? home : home + sep)) {
    throw new WireError('invalid_payload', "the workspace cannot be the daemon's home or lie inside it");
  }
  if (hidden.holds(real)) {
    throw new WireError('invalid_payload', 'the workspace cannot be a place that holds credentials');
  }
  return { workspace, real, identity: found.identity };
}

async function realDirectory(
  path: string,
): Promise<{ real: string; identity: { dev: string; ino: string } } | null> {
  try {
    const real = await realpath(path);
    const stats = await stat(real, { bigint: true });
    return stats.isDirectory()
      ? { real, identity: { dev: String(stats.dev), ino: String(stats.ino) } }
      : null;
  } catch {
    return null;
  }
}
