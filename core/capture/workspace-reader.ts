import type { ConfinedWorkspace } from '../confinement/confined-workspace.js';
import type { ResourceKind } from '../resources/names.js';
import type { DescriptorHashes } from '../resources/revision-hash.js';

/** What the registry asks of a workspace file capture: everything the read needs, nothing else. */
export interface WorkspaceReadRequest {
  /** The session's workspace, pinned. */
  workspace: ConfinedWorkspace;
  /** The client's workspace-relative path. */
  path: string;
  /** The source maximum of the resource kind. */
  maxBytes: number;
  /** Absolute paths of the daemon's own state directories. */
  excludedDirectories: readonly string[];
  /** What the revision hash covers besides the bytes, so the reader can hash them where they are. */
  resource: { kind: ResourceKind; name: string; description: string };
}

export interface WorkspaceRead {
  /** The exact bytes read: single-linked regular file, well-formed UTF-8 without NUL, unchanged while read. */
  bytes: Buffer;
  /** `bytes` decoded: the capture already checked they are exact UTF-8, so nobody decodes them again. */
  text: string;
  /**
   * Settles when the capture's last check has run: with the hashes of the bytes, or with that check's
   * refusal. The bytes may be examined meanwhile, but count only once this resolves, and its refusal
   * overrides anything concluded from them.
   */
  confirmed: Promise<DescriptorHashes>;
}

/**
 * Reads workspace files off the event loop. A read settles with the file or with the capture's own refusal
 * (`invalid_payload` with a fixed message, or `internal_error`); it is never interrupted, since a filesystem
 * wait cannot be.
 */
export interface WorkspaceReader {
  read(request: WorkspaceReadRequest): Promise<WorkspaceRead>;
  /**
   * Stops the reader, waiting at most `graceMs` for a read in progress. Resolves true when nothing was left
   * waiting on the filesystem, false when a read was still blocked and had to be abandoned.
   */
  close(graceMs: number): Promise<boolean>;
}
