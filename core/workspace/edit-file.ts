import { replaceAtomically } from './atomic-write.js';
import { WorkspaceToolFailure } from './workspace-tool-errors.js';
import { WORKSPACE_TOOL_LIMITS } from './workspace-tool-limits.js';
import {
  assertUnchanged,
  type HeldWorkspace,
  readWholeText,
  type WorkspaceHooks,
  withDirectory,
  withRegularFile,
} from './workspace-walk.js';

export interface EditFileArguments {
  path: readonly string[];
  oldText: string;
  newText: string;
}

/**
 * Replaces the one occurrence of `oldText` (occurrences that overlap count apart) and writes the result
 * atomically with the file's own mode, refusing it as `changed` if the file changed between its read and
 * the rename.
 */
export function editFile(
  held: HeldWorkspace,
  args: EditFileArguments,
  hooks?: WorkspaceHooks,
): { bytes: number } {
  const name = args.path[args.path.length - 1]!;
  return withDirectory(held, args.path.slice(0, -1), hooks, (directoryFd) =>
    withRegularFile(directoryFd, name, hooks, (file) => {
      const text = readWholeText(file, WORKSPACE_TOOL_LIMITS.edit_file_bytes_max, hooks);
      const at = text.indexOf(args.oldText);
      if (at === -1) throw new WorkspaceToolFailure('old_text_not_found');
      if (text.indexOf(args.oldText, at + 1) !== -1) throw new WorkspaceToolFailure('old_text_not_unique');
      const edited = Buffer.from(
        text.slice(0, at) + args.newText + text.slice(at + args.oldText.length),
        'utf8',
      );
      if (edited.length > WORKSPACE_TOOL_LIMITS.write_bytes_max) throw new WorkspaceToolFailure('too_large');
      replaceAtomically(directoryFd, name, edited, Number(file.state.mode & 0o777n), () => {
        hooks?.beforeRename?.();
        assertUnchanged(file);
      });
      return { bytes: edited.length };
    }),
  );
}
