import { WalkRefusal } from '../capture/descriptor-walk.js';

/** One fixed message per refusal: never the path, the content or an argument it was about. */
export const WORKSPACE_TOOL_ERRORS = {
  invalid_arguments: 'the arguments do not match the tool schema',
  invalid_path: 'the path is not a well-formed workspace-relative path',
  credential_path: 'the path matches a credential rule',
  excluded_directory: 'the path reaches daemon state',
  workspace_unavailable: 'the workspace directory cannot be opened',
  workspace_not_allowed: 'the workspace is the filesystem root',
  workspace_changed:
    'the workspace folder was moved, replaced or swapped for a link since its session was made',
  not_found: 'no such file or directory',
  symlink: 'the path contains a symbolic link',
  outside_workspace: 'the symbolic link leads outside the workspace',
  not_directory: 'a path component is not a directory',
  not_regular_file: 'the path is not a regular file',
  hard_linked: 'the file has more than one hard link',
  too_large: 'the file or its result exceeds the size limit',
  changed: 'the file changed during the call',
  binary_file: 'the file is not UTF-8 text without NUL',
  unreadable: 'the file cannot be read',
  unwritable: 'the file cannot be written',
  old_text_not_found: 'old_text does not occur in the file',
  old_text_not_unique: 'old_text occurs more than once in the file',
  timed_out: 'the tool call passed its deadline',
  cancelled: 'the tool call was cancelled',
  unavailable: 'the workspace tools cannot take the call now',
  internal_error: 'internal error',
} as const;

export type WorkspaceToolError = keyof typeof WORKSPACE_TOOL_ERRORS;

const CODES = Object.keys(WORKSPACE_TOOL_ERRORS) as WorkspaceToolError[];

export class WorkspaceToolFailure extends Error {
  readonly code: WorkspaceToolError;

  constructor(code: WorkspaceToolError) {
    super(WORKSPACE_TOOL_ERRORS[code]);
    this.name = 'WorkspaceToolFailure';
    this.code = code;
  }
}

/** The code of anything a tool threw: its own refusals and the walk's keep theirs, the rest is internal. */
export function workspaceToolErrorOf(error: unknown): WorkspaceToolError {
  if (error instanceof WorkspaceToolFailure) return error.code;
  if (error instanceof WalkRefusal) return error.reason;
  return 'internal_error';
}

/** `code` when it names a refusal (it crossed a thread boundary as text), else `internal_error`. */
export function knownWorkspaceToolError(code: unknown): WorkspaceToolError {
  return CODES.includes(code as WorkspaceToolError) ? (code as WorkspaceToolError) : 'internal_error';
}

/** The outcome of a refused call: its code and that code's fixed message. */
export function failed(code: WorkspaceToolError): { ok: false; code: WorkspaceToolError; message: string } {
  return { ok: false, code, message: WORKSPACE_TOOL_ERRORS[code] };
}
