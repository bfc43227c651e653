import { WireError } from '../errors.js';
import { PROFILE_LIMITS } from '../limits.js';
import { CAPTURED_SOURCE_REFUSALS, sourceMaxBytes } from './captured-source.js';
import { isValidResourceDescription, isValidResourceName, type ResourceKind } from './names.js';
import { isWellFormedText, utf8ByteLength } from './unicode.js';

/**
 * The `resource` member of `session.resources.register`: exactly `{kind, name, description, source}` with
 * source exactly `{kind:"inline", content}` or `{kind:"workspace_file", path}`. Every refusal here is
 * `invalid_payload`. Whether the name is taken, and the content rules of the captured bytes, are checked
 * by the caller (NameCatalog, validateCapturedSource).
 */
export type ResourceSource =
  | { readonly kind: 'inline'; readonly content: string }
  | { readonly kind: 'workspace_file'; readonly path: string };

export interface ResourceInput {
  readonly kind: ResourceKind;
  readonly name: string;
  readonly description: string;
  readonly source: ResourceSource;
}

export const RESOURCE_INPUT_REFUSALS = {
  shape: 'the resource must be exactly {kind, name, description, source}',
  legacy_shape: 'contract/content registration shapes are not accepted; use source',
  kind: 'the resource kind must be "tool" or "skill"',
  name: 'the resource name must match [a-z][a-z0-9_]* and be at most 48 bytes',
  description: 'the resource description must be text of at most 512 bytes without NUL',
  source: 'the source must be exactly {kind:"inline", content} or {kind:"workspace_file", path}',
  inline_text: 'the inline content is not well-formed Unicode text',
  path: 'the source path must be workspace-relative, at most 1024 bytes, without empty or dot components',
} as const;

const RESOURCE_MEMBERS = ['kind', 'name', 'description', 'source'];
const LEGACY_MEMBERS = ['contract', 'content'];

function refuse(message: string): never {
  throw new WireError('invalid_payload', message);
}

type JsonObject = Record<string, unknown>;

function hasExactly(value: unknown, members: readonly string[]): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === members.length && members.every((member) => Object.hasOwn(value, member));
}

/**
 * A workspace-relative path: 1 to 1,024 UTF-8 bytes, `/`-separated, no leading `/`, no empty, `.` or `..`
 * component, no NUL. Whether it may be opened (links, file type, credential-like names, backend state) is
 * decided at capture.
 */
export function isValidSourcePath(path: unknown): path is string {
  if (typeof path !== 'string' || path.length === 0 || path.includes('\u0000') || !isWellFormedText(path)) {
    return false;
  }
  if (utf8ByteLength(path) > PROFILE_LIMITS.source_path_bytes) return false;
  return path.split('/').every((component) => component !== '' && component !== '.' && component !== '..');
}

function parseSource(kind: ResourceKind, source: unknown): ResourceSource {
  if (hasExactly(source, ['kind', 'content']) && source.kind === 'inline') {
    const { content } = source;
    if (typeof content !== 'string') refuse(RESOURCE_INPUT_REFUSALS.source);
    if (!isWellFormedText(content)) refuse(RESOURCE_INPUT_REFUSALS.inline_text);
    if (utf8ByteLength(content) > sourceMaxBytes(kind)) refuse(CAPTURED_SOURCE_REFUSALS.too_large);
    return Object.freeze({ kind: 'inline', content });
  }
  if (hasExactly(source, ['kind', 'path']) && source.kind === 'workspace_file') {
    if (!isValidSourcePath(source.path)) refuse(RESOURCE_INPUT_REFUSALS.path);
    return Object.freeze({ kind: 'workspace_file', path: source.path });
  }
  return refuse(RESOURCE_INPUT_REFUSALS.source);
}

export function parseResourceInput(value: unknown): ResourceInput {
  if (!hasExactly(value, RESOURCE_MEMBERS)) {
    const legacy =
      typeof value === 'object' &&
      value !== null &&
      LEGACY_MEMBERS.some((member) => Object.hasOwn(value, member));
    refuse(legacy ? RESOURCE_INPUT_REFUSALS.legacy_shape : RESOURCE_INPUT_REFUSALS.shape);
  }
  const { kind, name, description, source } = value;
  if (kind !== 'tool' && kind !== 'skill') refuse(RESOURCE_INPUT_REFUSALS.kind);
  if (!isValidResourceName(name)) refuse(RESOURCE_INPUT_REFUSALS.name);
  if (!isValidResourceDescription(description)) refuse(RESOURCE_INPUT_REFUSALS.description);
  return Object.freeze({ kind, name, description, source: parseSource(kind, source) });
}
