import {
  type DocumentOptions,
  type ParseOptions,
  parseDocument,
  type SchemaOptions,
  type ToJSOptions,
} from 'yaml';
import { scalarCount } from '../resources/unicode.js';
import type { SkillSkipReason } from './installed-skill.js';
import { SKILL_LIMITS } from './skill-limits.js';

/** `descriptionChars`: present when the description was cut, its length before (in characters). */
export type ParsedSkill =
  | { description: string; body: string; descriptionChars?: number }
  | { refused: SkillSkipReason };

const DELIMITER = '---';
const OPENING = /^---\r?\n/;
const LEADING_BLANK_LINES = /^(?:[ \t]*\r?\n)+/;

// YAML 1.2 core types only: no custom tags, none of YAML 1.1's (binary, set, timestamp…), no merge keys.
const PARSE_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.2',
  schema: 'core',
  customTags: [],
  resolveKnownTags: false,
  merge: false,
  uniqueKeys: true,
  strict: true,
  prettyErrors: false,
};
// Front matter needs few aliases if any; the bound stops an alias bomb before it expands.
const TO_JS_OPTIONS: ToJSOptions = { maxAliasCount: 16, mapAsMap: true };

/**
 * Splits a SKILL.md (byte-order mark already dropped) into its front matter and body and checks the front
 * matter: a YAML mapping between a first line `---` and the next line that is exactly `---`, with a
 * non-empty string `description` and, if present, a string `name` equal to the directory name. Other keys
 * are ignored. A description longer than `description_chars` characters after trimming is cut there.
 */
export function parseSkillFile(text: string, directoryName: string): ParsedSkill {
  const opening = OPENING.exec(text);
  if (opening === null) return { refused: 'no_front_matter' };
  const split = splitAtClosingLine(text, opening[0].length);
  if (split === null) return { refused: 'malformed_front_matter' };

  const fields = parseMapping(split.yaml);
  if (fields === null) return { refused: 'malformed_front_matter' };
  const name = fields.get('name');
  const description = fields.get('description');
  if (name !== undefined && typeof name !== 'string') return { refused: 'malformed_front_matter' };
  if (description !== undefined && typeof description !== 'string') {
    return { refused: 'malformed_front_matter' };
  }
  if (name !== undefined && name !== directoryName) return { refused: 'name_mismatch' };
  const trimmed = description?.trim() ?? '';
  if (trimmed === '') return { refused: 'no_description' };
  const body = split.body.replace(LEADING_BLANK_LINES, '');
  const characters = scalarCount(trimmed);
  if (characters <= SKILL_LIMITS.description_chars) return { description: trimmed, body };
  const cut = [...trimmed].slice(0, SKILL_LIMITS.description_chars).join('').trimEnd();
  return { description: cut, body, descriptionChars: characters };
}

/** The YAML before the first line after `start` that is exactly `---` (CRLF accepted), and what follows. */
function splitAtClosingLine(text: string, start: number): { yaml: string; body: string } | null {
  let lineStart = start;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd);
    if (line === DELIMITER || (newline !== -1 && line === `${DELIMITER}\r`)) {
      return { yaml: text.slice(start, lineStart), body: newline === -1 ? '' : text.slice(newline + 1) };
    }
    if (newline === -1) return null;
    lineStart = newline + 1;
  }
  return null;
}

/** The front matter's top-level mapping, or null when it does not parse cleanly or is not a mapping. */
function parseMapping(yaml: string): Map<unknown, unknown> | null {
  try {
    const document = parseDocument(yaml, PARSE_OPTIONS);
    // Warnings include unresolved tags, which would otherwise be read as plain strings.
    if (document.errors.length > 0 || document.warnings.length > 0) return null;
    const value: unknown = document.toJS(TO_JS_OPTIONS);
    return value instanceof Map ? value : null;
  } catch {
    return null;
  }
}
