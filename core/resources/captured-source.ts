import { WireError } from '../errors.js';
import { PROFILE_LIMITS } from '../limits.js';
import type { ResourceKind } from './names.js';
import { parseToolContract, type ToolContract } from './tool-contract.js';
import { decodeUtf8Exact } from './unicode.js';

/**
 * The content rules every captured source passes, inline or read from the workspace. A source over its
 * per-source maximum is refused as content (`invalid_payload`, as wire-v2 section 8 lists "size" among the
 * content and source rules); `limit_exceeded` is kept for the registry's count and byte budgets.
 */
export type CapturedContent =
  | { readonly kind: 'tool'; readonly contract: ToolContract }
  | { readonly kind: 'skill'; readonly instructions: string };

export const CAPTURED_SOURCE_REFUSALS = {
  too_large: 'the source exceeds the per-source maximum',
  skill_not_utf8: 'the skill text is not valid UTF-8',
  skill_nul: 'the skill text contains NUL',
  skill_empty: 'the skill text is empty',
} as const;

function refuse(message: string): never {
  throw new WireError('invalid_payload', message);
}

/** The per-source maximum in bytes: 32 KiB for a tool contract, 16 KiB for skill text. */
export function sourceMaxBytes(kind: ResourceKind): number {
  return kind === 'tool' ? PROFILE_LIMITS.tool_source_bytes : PROFILE_LIMITS.skill_source_bytes;
}

/**
 * Skill instructions: nonempty, exact UTF-8, no NUL. The text is kept byte for byte (a leading byte order
 * mark stays as U+FEFF); it is not trimmed or normalized.
 */
export function parseSkillText(captured: Uint8Array, decoded?: string): string {
  if (captured.length === 0) refuse(CAPTURED_SOURCE_REFUSALS.skill_empty);
  const text = decoded ?? decodeUtf8Exact(captured) ?? refuse(CAPTURED_SOURCE_REFUSALS.skill_not_utf8);
  if (text.includes('\u0000')) refuse(CAPTURED_SOURCE_REFUSALS.skill_nul);
  return text;
}

/**
 * `text`, when given, is `captured` already decoded exactly (by the capture, or the inline source the bytes
 * were encoded from), so it is not decoded a second time.
 */
export function validateCapturedSource(
  kind: ResourceKind,
  captured: Uint8Array,
  text?: string,
): CapturedContent {
  if (captured.length > sourceMaxBytes(kind)) refuse(CAPTURED_SOURCE_REFUSALS.too_large);
  if (kind === 'tool')
    return Object.freeze({ kind, contract: parseToolContract(text ?? Buffer.from(captured)) });
  return Object.freeze({ kind, instructions: parseSkillText(captured, text) });
}
