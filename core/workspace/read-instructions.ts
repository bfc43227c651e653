import { readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, posix } from 'node:path';
import { beneath, lstatBeneath } from '../capture/descriptor-walk.js';
import { decodeExactUtf8 } from '../capture/exact-utf8.js';
import { parseRelativePath } from '../capture/relative-path.js';
import { isHiddenPath } from '../confinement/hidden-places.js';
import { readFile } from './read-file.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';
import type { HeldWorkspace, WorkspaceHooks } from './workspace-walk.js';

export interface ReadInstructionsArguments {
  /** The file's name at the root, `AGENTS.md`. */
  name: string;
  /** Bytes of its beginning that are used. */
  length: number;
  /** Whether a symbolic link at `name` to a regular file beneath the same root is followed. */
  followLink: boolean;
}

export interface InstructionsWindow {
  /** The file's first `length` bytes at most, cut between characters. */
  content: string;
  /** Whether the file holds more than `content`. */
  cut: boolean;
  /** Whether `name` was a symbolic link that was followed. */
  linked: boolean;
}

/**
 * Reads the beginning of an instructions file at the root with `read_file`'s window, so a file of any size
 * gives its first `length` bytes. A symbolic link there is followed once when `followLink` allows it and it
 * leads to a path beneath the root (an absolute one is taken relative to the root's real path): that path
 * is then walked like any workspace path, so no further link is followed and credential paths and daemon
 * state stay refused. A link that leads anywhere else is `outside_workspace`.
 */
export function readInstructions(
  held: HeldWorkspace,
  args: ReadInstructionsArguments,
  hooks?: WorkspaceHooks,
): InstructionsWindow {
  const linked =
    args.followLink && lstatBeneath(beneath(held.rootFd, args.name), 'not_found').isSymbolicLink();
  const path = linked ? linkTarget(held.rootFd, args.name) : [args.name];
  if (isHiddenPath(path, held.hidden)) throw new WorkspaceToolFailure('credential_path');
  // The window is the daemon's own, for the system message: no result bound of a model's call applies.
  const window = readFile(held, { path, offset: 0, length: args.length }, hooks, Number.POSITIVE_INFINITY);
  return { content: window.content, cut: window.next_offset !== null, linked };
}

/** The components, beneath the root, of the path the link at `name` holds; `outside_workspace` if none. */
function linkTarget(rootFd: number, name: string): string[] {
  let target: string | null;
  try {
    target = decodeExactUtf8(readlinkSync(beneath(rootFd, name), { encoding: 'buffer' }));
  } catch {
    throw new WorkspaceToolFailure('unreadable');
  }
  if (target === null) throw new WorkspaceToolFailure('outside_workspace');
  let relative = target;
  if (isAbsolute(target)) {
    let root: string;
    try {
      root = realpathSync(`/proc/self/fd/${rootFd}`);
    } catch {
      throw new WorkspaceToolFailure('unreadable');
    }
    relative = posix.relative(root, posix.normalize(target));
  }
  const normalized = posix.normalize(relative);
  if (normalized === '..' || normalized.startsWith('../') || isAbsolute(normalized)) {
    throw new WorkspaceToolFailure('outside_workspace');
  }
  try {
    return parseRelativePath(normalized);
  } catch {
    // `.` (the root itself) and what no file can be called.
    throw new WorkspaceToolFailure('not_regular_file');
  }
}
