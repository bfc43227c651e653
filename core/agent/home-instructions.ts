import { CAPTURE_REFUSALS } from '../capture/refusals.js';
import { captureWorkspaceFile } from '../capture/workspace-file.js';
import { isWireError } from '../errors.js';

export const HOME_INSTRUCTIONS_FILE = 'AGENTS.md';
/** UTF-8 bytes of an `AGENTS.md`, the home's or a workspace's; a larger one is not used. */
export const INSTRUCTIONS_BYTES = 16_384;

/** The home's `AGENTS.md`, or why it was not used. */
export type HomeInstructions = { text: string } | { text: ''; refused: string | null };

/**
 * Reads `<home>/AGENTS.md` once at startup, through the same descriptor walk and rules as a captured
 * source: a regular, single-linked file (no symlink), UTF-8 without NUL, at most INSTRUCTIONS_BYTES. A
 * missing file is no instructions; any other refusal is reported by its fixed message, never the content.
 */
export function readHomeInstructions(home: string): HomeInstructions {
  try {
    const { text } = captureWorkspaceFile({
      workspace: home,
      path: HOME_INSTRUCTIONS_FILE,
      maxBytes: INSTRUCTIONS_BYTES,
      excludedDirectories: [],
    });
    return { text: text.replace(/^\uFEFF/, '') };
  } catch (error) {
    if (!isWireError(error)) return { text: '', refused: CAPTURE_REFUSALS.unreadable };
    // No home yet, or no file in it: nothing to read.
    const absent = [CAPTURE_REFUSALS.not_found, CAPTURE_REFUSALS.workspace_unavailable] as string[];
    return { text: '', refused: absent.includes(error.message) ? null : error.message };
  }
}
