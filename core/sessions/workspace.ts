import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, normalize, sep } from 'node:path';
import { WireError } from '../errors.js';
import { SERVICE_LIMITS } from '../limits.js';

/**
 * A session's workspace: an absolute, normalized path of an existing directory that a command sandbox can
 * confine. Its real path (every symlink followed) must not be the filesystem root, the daemon's home or a
 * folder inside that home: there a writable workspace would uncover what every tool must not reach. The
 * tools check the same again, by descriptor, at every call.
 */
export async function checkWorkspace(path: string, daemonHome: string): Promise<string> {
  if (
    !isAbsolute(path) ||
    path.includes('\0') ||
    Buffer.byteLength(path) > SERVICE_LIMITS.workspace_path_bytes
  ) {
    throw new WireError('invalid_payload', 'the workspace must be an absolute path');
  }
  const normalized = normalize(path);
  const workspace = normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
  const real = await realDirectory(workspace);
  if (real === null) throw new WireError('invalid_payload', 'the workspace must be an existing directory');
  if (real === sep) throw new WireError('invalid_payload', 'the workspace cannot be the filesystem root');
  const home = (await realDirectory(daemonHome)) ?? daemonHome;
  if (real === home || real.startsWith(home.endsWith(sep) ? home : home + sep)) {
    throw new WireError('invalid_payload', "the workspace cannot be the daemon's home or lie inside it");
  }
  return workspace;
}

async function realDirectory(path: string): Promise<string | null> {
  try {
    const real = await realpath(path);
    return (await stat(real)).isDirectory() ? real : null;
  } catch {
    return null;
  }
}
