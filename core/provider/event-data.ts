import { exceedsJsonDepth } from '../json-depth.js';
import { PROVIDER_LIMITS } from '../limits.js';
import { ProviderError } from './provider-error.js';

/**
 * An event's data as the JSON object every API here sends. Data that does not parse is malformed, or a
 * truncation when the end of the body completed it (`cutByEnd`); data that is not an object, or nests
 * more than the bound allows, is malformed.
 */
export function eventObject(data: string, cutByEnd: boolean): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new ProviderError(cutByEnd ? 'truncated' : 'malformed_stream');
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    exceedsJsonDepth(data, PROVIDER_LIMITS.event_nesting_depth)
  ) {
    throw new ProviderError('malformed_stream');
  }
  return value as Record<string, unknown>;
}

/** A string member, or '' for anything else. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
