import { join } from 'node:path';
import { SKILL_FILE_NAME, SKILLS_DIRECTORY_NAME } from '../../config/skills.js';
import { CAPTURE_REFUSALS, type CaptureRefusal } from '../capture/refusals.js';
import { captureWorkspaceFile } from '../capture/workspace-file.js';
import { WireError } from '../errors.js';
import type { SkillSkipReason } from './installed-skill.js';
import { SKILL_LIMITS } from './skill-limits.js';

/** What the walk's refusals mean for a skill; whatever does not name a rule of its own is `unreadable`. */
const SKIP_REASONS: Record<CaptureRefusal, SkillSkipReason> = {
  path_not_text: 'unreadable',
  path_too_long: 'unreadable',
  path_forbidden_character: 'unreadable',
  path_absolute: 'unreadable',
  path_empty_component: 'unreadable',
  path_dot_component: 'unreadable',
  path_component_too_long: 'unreadable',
  credential_path: 'credential_path',
  excluded_directory: 'unreadable',
  workspace_unavailable: 'unreadable',
  not_found: 'unreadable',
  symlink: 'symlink',
  not_directory: 'unreadable',
  not_regular_file: 'not_regular_file',
  hard_linked: 'hard_linked',
  too_large: 'too_large',
  changed: 'unreadable',
  not_utf8: 'not_utf8',
  contains_nul: 'contains_nul',
  unreadable: 'unreadable',
};

// The capture answers with a fixed message per refusal; this maps the message back to its refusal.
const REFUSAL_BY_MESSAGE = new Map<string, CaptureRefusal>(
  Object.entries(CAPTURE_REFUSALS).map(([refusal, message]) => [message, refusal as CaptureRefusal]),
);

export type SkillFile = { text: string } | { refused: SkillSkipReason };

const BYTE_ORDER_MARK = '\uFEFF';

/**
 * Reads `<home>/skills/<name>/SKILL.md` as the daemon reads any untrusted file: the capture's
 * descriptor-relative walk rooted at the skills folder, so a skill directory or SKILL.md that is (or was
 * swapped for) a symlink, a hard link or anything but a regular file is refused, as is a file over
 * `skill_bytes`, not UTF-8, holding a NUL, or on a credential path. A leading byte-order mark is dropped.
 */
export function readSkillFile(home: string, name: string): SkillFile {
  // One path component only: a name with a slash would walk into another skill's directory.
  if (name.includes('/')) return { refused: 'unreadable' };
  let text: string;
  try {
    text = captureWorkspaceFile({
      workspace: join(home, SKILLS_DIRECTORY_NAME),
      path: `${name}/${SKILL_FILE_NAME}`,
      maxBytes: SKILL_LIMITS.skill_bytes,
      // The skills folder lies inside the daemon's home and the walk never leaves it: nothing to exclude.
      excludedDirectories: [],
    }).text;
  } catch (error) {
    if (!(error instanceof WireError)) throw error;
    const refusal = error.code === 'invalid_payload' ? REFUSAL_BY_MESSAGE.get(error.message) : undefined;
    return { refused: refusal === undefined ? 'unreadable' : SKIP_REASONS[refusal] };
  }
  return { text: text.startsWith(BYTE_ORDER_MARK) ? text.slice(BYTE_ORDER_MARK.length) : text };
}
