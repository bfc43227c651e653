import { PROFILE_LIMITS } from '../limits.js';
import { captureRefusal } from './refusals.js';

/** Linux NAME_MAX: longer components can never name a file, so they are refused before any open. */
const COMPONENT_BYTES_MAX = 255;

/**
 * Lexical validation of a workspace-relative source path; returns its components. Nothing here touches the
 * filesystem: `.`, `..` and empty components must be refused before the walk, because opening them
 * relative to a held directory would not refuse them.
 *
 * A backslash is refused although Linux allows it in names: a client writing `dir\file` means a path the
 * daemon would otherwise read as one oddly named file, and credential rules match on `/` components.
 */
export function parseRelativePath(path: unknown): string[] {
  if (typeof path !== 'string' || !isWellFormed(path)) throw captureRefusal('path_not_text');
  if (Buffer.byteLength(path, 'utf8') > PROFILE_LIMITS.source_path_bytes)
    throw captureRefusal('path_too_long');
  if (path.includes('\0') || path.includes('\\')) throw captureRefusal('path_forbidden_character');
  if (path.startsWith('/')) throw captureRefusal('path_absolute');
  const components = path.split('/');
  for (const component of components) {
    if (component === '') throw captureRefusal('path_empty_component');
    if (component === '.' || component === '..') throw captureRefusal('path_dot_component');
    if (Buffer.byteLength(component, 'utf8') > COMPONENT_BYTES_MAX) {
      throw captureRefusal('path_component_too_long');
    }
  }
  return components;
}

/** False for a string holding a lone surrogate, which has no UTF-8 encoding and so names no file. */
function isWellFormed(text: string): boolean {
  return Buffer.from(text, 'utf8').toString('utf8') === text;
}
