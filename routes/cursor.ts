import { WireError } from '../core/errors.js';

/**
 * Page cursors are opaque to clients: a prefix naming what they page through and a position.
 * A cursor of another kind, or a malformed one, is refused as `invalid_payload`.
 */
export function encodeCursor(prefix: string, position: number | null): string | null {
  return position === null ? null : `${prefix}.${position}`;
}

export function decodeCursor(prefix: string, cursor: string | null): number {
  if (cursor === null) return 0;
  const match = /^([a-z]+)\.(\d{1,15})$/.exec(cursor);
  if (!match || match[1] !== prefix) throw new WireError('invalid_payload', 'the cursor is not valid here');
  return Number(match[2]);
}
