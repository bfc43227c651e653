import { utf8ByteLength } from '../resources/unicode.js';

/**
 * The longest beginning of `items` whose compact JSON array takes at most `limit` UTF-8 bytes: each item
 * counts its encoded size and the comma before it (none before the first), the brackets count 2.
 */
export function fittingPrefix<T>(items: readonly T[], limit: number): T[] {
  let bytes = 2;
  let kept = 0;
  for (const item of items) {
    bytes += utf8ByteLength(JSON.stringify(item)) + (kept > 0 ? 1 : 0);
    if (bytes > limit) break;
    kept += 1;
  }
  return items.slice(0, kept);
}
