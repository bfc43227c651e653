import { ownFolder } from '../confinement/confined-workspace.js';
import { isHiddenPath } from '../confinement/hidden-places.js';
import { type WorkspaceToolError, workspaceToolErrorOf } from '../workspace/workspace-tool-errors.js';
import { readWholeText, withDirectory, withRegularFile, withWorkspace } from '../workspace/workspace-walk.js';
import type { SkillFileEntry, SkillFolder, SkillSkipReason } from './installed-skill.js';
import { SKILL_FILE_NAME } from './skill-discovery.js';
import { listSkillFiles } from './skill-files.js';
import { SKILL_LIMITS } from './skill-limits.js';

/** What the walk's refusals mean for a skill; whatever does not name a rule of its own is `unreadable`. */
const SKIP_REASONS: Partial<Record<WorkspaceToolError, SkillSkipReason>> = {
  credential_path: 'credential_path',
  symlink: 'symlink',
  not_regular_file: 'not_regular_file',
  hard_linked: 'hard_linked',
  too_large: 'too_large',
  binary_file: 'not_text',
};

export type SkillFolderRead =
  | { text: string; files: SkillFileEntry[]; filesTruncated: boolean }
  | { refused: SkillSkipReason };

const BYTE_ORDER_MARK = '\uFEFF';

/**
 * Reads a skill's SKILL.md and lists its folder, as the workspace tools read and list: the descriptor walk
 * from the folder's root, so a skill folder or SKILL.md that is (or was swapped for) a symlink, a hard link
 * or anything but a regular file is refused, as is a file over `skill_bytes`, not UTF-8, holding a NUL, on a
 * credential path or in daemon state (`excludedDirectories`). A leading byte-order mark is dropped.
 */
export function readSkillFolder(
  folder: SkillFolder,
  excludedDirectories: readonly string[],
): SkillFolderRead {
  if (isHiddenPath([...folder.components, SKILL_FILE_NAME], folder.hidden))
    return { refused: 'credential_path' };
  try {
    return withWorkspace(ownFolder(folder.root, folder.hidden), excludedDirectories, (held) =>
      withDirectory(held, folder.components, undefined, (directoryFd) => {
        const text = withRegularFile(directoryFd, SKILL_FILE_NAME, undefined, (file) =>
          readWholeText(file, SKILL_LIMITS.skill_bytes, undefined),
        );
        const { files, truncated } = listSkillFiles(held, directoryFd);
        return {
          text: text.startsWith(BYTE_ORDER_MARK) ? text.slice(BYTE_ORDER_MARK.length) : text,
          files,
          filesTruncated: truncated,
        };
      }),
    );
  } catch (error) {
    return { refused: SKIP_REASONS[workspaceToolErrorOf(error)] ?? 'unreadable' };
  }
}
