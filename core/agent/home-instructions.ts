import { CAPTURE_REFUSALS } from '../capture/refusals.js';
import { captureWorkspaceFile } from '../capture/workspace-file.js';
import { isWireError } from '../errors.js';

/** The instructions file of the home, and of a workspace's root. */
export const INSTRUCTIONS_FILE = 'AGENTS.md';
/** UTF-8 bytes of an `AGENTS.md`, the home's or a workspace's; a larger one is not used. */
export const INSTRUCTIONS_BYTES = 16_384;

/** The home's `AGENTS.md` ('' when not used) and, when a file was there but refused, why. */
export interface HomeInstructions {
  text: string;
  refused: string | null;
}

/**
 * Reads `<home>/AGENTS.md` once at startup, through the same descriptor walk and rules as a captured
 * source: a regular, single-linked file (no symlink), UTF-8 without NUL, at most INSTRUCTIONS_BYTES. A
 * missing file is no instructions; any other refusal is reported by its fixed message, never the content.
 */
export function readHomeInstructions(home: string): HomeInstructions {
  try {
    const { text } = captureWorkspaceFile({
      workspace: home,
      path: INSTRUCTIONS_FILE,
      maxBytes: INSTRUCTIONS_BYTES,
      excludedDirectories: [],
    });
    return { text: text.replace(/^\uFEFF/, ''), refused: null };
  } catch (error) {
    if (!isWireError(error)) return { text: '', refused: CAPTURE_REFUSALS.unreadable };
    // No home yet, or no file in it: nothing to read.
    const absent = [CAPTURE_REFUSALS.not_found, CAPTURE_REFUSALS.workspace_unavailable] as string[];
    return { text: '', refused: absent.includes(error.message) ? null : error.message };
  }
}
