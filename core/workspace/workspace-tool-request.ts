import type { ConfinedWorkspace, OwnFolder } from '../confinement/confined-workspace.js';
import type { WorkspaceToolError } from './workspace-tool-errors.js';

export type WorkspaceToolName = 'read_file' | 'list_directory' | 'search_files' | 'write_file' | 'edit_file';

export const WORKSPACE_TOOL_NAMES: readonly WorkspaceToolName[] = Object.freeze([
  'read_file',
  'list_directory',
  'search_files',
  'write_file',
  'edit_file',
]);

export interface WorkspaceToolRequest {
  tool: WorkspaceToolName;
  /** The session's workspace, pinned (opened following symlinks, as the capture does: the user chose it). */
  workspace: ConfinedWorkspace | OwnFolder;
  /** Absolute paths of the daemon's own state directories, refused as the capture refuses them. */
  excludedDirectories: readonly string[];
  /** The model's arguments, parsed from JSON but not checked yet. */
  arguments: Record<string, unknown>;
}

export type WorkspaceToolOutcome =
  /** `output` is the text the model receives: compact JSON. */
  { ok: true; output: string } | { ok: false; code: WorkspaceToolError; message: string };
