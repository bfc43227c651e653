import { isHiddenPath } from '../confinement/hidden-places.js';
import { editFile } from './edit-file.js';
import { listDirectory } from './list-directory.js';
import { readFile } from './read-file.js';
import { readInstructions } from './read-instructions.js';
import { searchFiles } from './search-files.js';
// Types only: the argument checks (and the schema library they use) stay out of the tool threads.
import type { WorkspaceToolCall, WorkspaceToolJob } from './workspace-tool-arguments.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';
import { type HeldWorkspace, type WorkspaceHooks, withWorkspace } from './workspace-walk.js';
import { writeFile } from './write-file.js';

/**
 * Runs one checked call synchronously, on the thread it is called from, and returns the text the model
 * receives; throws the refusal otherwise. The workspace threads run this; tests call it with hooks.
 */
export function executeWorkspaceTool(job: WorkspaceToolJob, hooks?: WorkspaceHooks): string {
  const { call } = job;
  if (isHiddenPath(call.path, job.workspace.hidden)) throw new WorkspaceToolFailure('credential_path');
  return withWorkspace(job.workspace, job.excludedDirectories, (held) =>
    JSON.stringify(dispatch(held, call, hooks)),
  );
}

function dispatch(held: HeldWorkspace, call: WorkspaceToolCall, hooks: WorkspaceHooks | undefined): unknown {
  switch (call.tool) {
    case 'read_file':
      return readFile(held, call, hooks);
    case 'list_directory':
      return listDirectory(held, call, hooks);
    case 'search_files':
      return searchFiles(held, call, hooks);
    case 'write_file':
      return writeFile(held, call, hooks);
    case 'edit_file':
      return editFile(held, call, hooks);
    case 'read_instructions':
      return readInstructions(
        held,
        { name: call.path[0], length: call.length, followLink: call.followLink },
        hooks,
      );
  }
}
