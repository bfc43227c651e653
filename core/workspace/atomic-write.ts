import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { beneath, errnoOf, WalkRefusal } from '../capture/descriptor-walk.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NOCTTY } = constants;
const TEMPORARY_FLAGS = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY;

/** The temporary a write to `name` goes through: hidden, beside the target, named so nothing else is. */
export function temporaryName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Replaces `name` beneath the held directory with `bytes` so that it is always either its old content or
 * the new, whatever stops the process: a temporary created exclusively beside it, written, synced,
 * renamed over it through the held directory on both sides, the directory synced. `beforeRename` checks
 * the target once more (it throws to refuse); on any failure the temporary is removed.
 */
export function replaceAtomically(
  directoryFd: number,
  name: string,
  bytes: Uint8Array,
  mode: number,
  beforeRename: () => void,
): void {
  const temporary = beneath(directoryFd, temporaryName(name));
  let fd: number;
  try {
    fd = openSync(temporary, TEMPORARY_FLAGS, 0o600);
  } catch (error) {
    throw writeRefusal(error);
  }
  let renamed = false;
  try {
    try {
      fchmodSync(fd, mode);
      writeFully(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    beforeRename();
    renameSync(temporary, beneath(directoryFd, name));
    renamed = true;
    fsyncSync(directoryFd);
  } catch (error) {
    throw writeRefusal(error);
  } finally {
    if (!renamed) removeQuietly(temporary);
  }
}

function writeFully(fd: number, bytes: Uint8Array): void {
  for (let written = 0; written < bytes.length; ) {
    written += writeSync(fd, bytes, written, bytes.length - written);
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone, or the directory refuses: nothing more can be done about it here.
  }
}

/** Maps an errno of a write step to a refusal; a refusal already decided passes through. */
export function writeRefusal(error: unknown): Error {
  if (error instanceof WorkspaceToolFailure || error instanceof WalkRefusal) return error;
  switch (errnoOf(error)) {
    case 'ENOENT':
      return new WorkspaceToolFailure('not_found');
    case 'ELOOP':
      return new WorkspaceToolFailure('symlink');
    case 'ENOTDIR':
      return new WorkspaceToolFailure('not_directory');
    case 'EISDIR':
    case 'ENOTEMPTY':
      return new WorkspaceToolFailure('not_regular_file');
    case 'EEXIST':
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
    case 'EIO':
    case 'ENAMETOOLONG':
    case 'EMLINK':
    case 'ETXTBSY':
      return new WorkspaceToolFailure('unwritable');
    default:
      return new WorkspaceToolFailure('internal_error');
  }
}
