import { statSync } from 'node:fs';
import { isAbsolute, normalize } from 'node:path';
import { WireError } from '../errors.js';
import { SERVICE_LIMITS } from '../limits.js';

/** A session's workspace: an absolute, normalized path of an existing directory. */
export function checkWorkspace(path: string): string {
  if (
    !isAbsolute(path) ||
    path.includes('\0') ||
    Buffer.byteLength(path) > SERVICE_LIMITS.workspace_path_bytes
  ) {
    throw new WireError('invalid_payload', 'the workspace must be an absolute path');
  }
  const normalized = normalize(path);
  const workspace = normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
  let isDirectory = false;
  try {
    isDirectory = statSync(workspace).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) throw new WireError('invalid_payload', 'the workspace must be an existing directory');
  return workspace;
}
