import { utf8ByteLength } from '../resources/unicode.js';
import type { WorkspaceToolOutcome } from '../workspace/workspace-tools.js';

/** What became of one read of an `AGENTS.md`, as `status` reports it. */
export interface InstructionsState {
  /**
   * `absent`: no such file (or no such folder); `empty`: nothing but white space; `used`: whole; `cut`: its
   * first `file_bytes` used; `refused`: not used, for `reason`.
   */
  state: 'absent' | 'empty' | 'used' | 'cut' | 'refused';
  /** UTF-8 bytes of the text used (0 unless used or cut). */
  bytes: number;
  /** The refusal's fixed code (`symlink`, `outside_workspace`, `hard_linked`, …), else null. */
  reason: string | null;
  /** Whether it was a symbolic link to another file of the same folder, followed. */
  linked: boolean;
}

/** The text a read gives the system message ('' when none) and its state. */
export interface InstructionsRead {
  text: string;
  state: InstructionsState;
}

const BYTE_ORDER_MARK = '\uFEFF';
const ABSENT = new Set(['not_found', 'workspace_unavailable']);

/** The text and state of a read of read-instructions.ts, answered as a workspace tool's outcome. */
export function instructionsReadOf(outcome: WorkspaceToolOutcome): InstructionsRead {
  if (!outcome.ok) {
    const state = ABSENT.has(outcome.code) ? 'absent' : 'refused';
    return {
      text: '',
      state: { state, bytes: 0, reason: state === 'refused' ? outcome.code : null, linked: false },
    };
  }
  const window = JSON.parse(outcome.output) as { content: string; cut: boolean; linked: boolean };
  const text = window.content.startsWith(BYTE_ORDER_MARK)
    ? window.content.slice(BYTE_ORDER_MARK.length)
    : window.content;
  if (text.trim() === '')
    return { text: '', state: { state: 'empty', bytes: 0, reason: null, linked: window.linked } };
  return {
    text,
    state: {
      state: window.cut ? 'cut' : 'used',
      bytes: utf8ByteLength(text),
      reason: null,
      linked: window.linked,
    },
  };
}
