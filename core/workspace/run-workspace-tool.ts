import { executeWorkspaceTool } from './execute-workspace-tool.js';
import { parseWorkspaceToolRequest } from './workspace-tool-arguments.js';
import { failed, workspaceToolErrorOf } from './workspace-tool-errors.js';
import type { WorkspaceToolOutcome, WorkspaceToolRequest } from './workspace-tool-request.js';
import type { WorkspaceHooks } from './workspace-walk.js';

/** A whole request on the calling thread, never throwing: for tests and for scripts without threads. */
export function runWorkspaceTool(
  request: WorkspaceToolRequest,
  hooks?: WorkspaceHooks,
): WorkspaceToolOutcome {
  try {
    return { ok: true, output: executeWorkspaceTool(parseWorkspaceToolRequest(request), hooks) };
  } catch (error) {
    return failed(workspaceToolErrorOf(error));
  }
}
