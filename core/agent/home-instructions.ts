import { ownFolder } from '../confinement/confined-workspace.js';
import { readInstructions } from '../workspace/read-instructions.js';
import { failed, workspaceToolErrorOf } from '../workspace/workspace-tool-errors.js';
import { withWorkspace } from '../workspace/workspace-walk.js';
import { INSTRUCTIONS_FILE, INSTRUCTIONS_LIMITS } from './instructions-limits.js';
import { type InstructionsRead, instructionsReadOf } from './instructions-state.js';

/**
 * Reads `<home>/AGENTS.md` once at startup with the workspace tools' walk and read window: a regular,
 * single-linked file (a symbolic link is refused: nothing of the home is linked elsewhere), UTF-8 without
 * NUL in the part used, of which the first `file_bytes` are used. A refusal is reported by its fixed code,
 * never the content.
 */
export function readHomeInstructions(home: string): InstructionsRead {
  let outcome: Parameters<typeof instructionsReadOf>[0];
  try {
    const window = withWorkspace(ownFolder(home), [], (held) =>
      readInstructions(held, {
        name: INSTRUCTIONS_FILE,
        length: INSTRUCTIONS_LIMITS.file_bytes,
        followLink: false,
      }),
    );
    outcome = { ok: true, output: JSON.stringify(window) };
  } catch (error) {
    outcome = failed(workspaceToolErrorOf(error));
  }
  return instructionsReadOf(outcome);
}
