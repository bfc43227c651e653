import { randomBytes } from 'node:crypto';

/**
 * Identifiers and secrets. Every id the daemon issues is unpredictable and fits the wire's ID
 * alphabet `[A-Za-z0-9._:-]` (base64url adds only `-` and `_`).
 */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`;
}

/** 32 random bytes, base64url: control tokens, executor resume secrets. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

export const WIRE_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
const WIRE_ID = new RegExp(WIRE_ID_PATTERN);

export function isWireId(value: unknown): value is string {
  return typeof value === 'string' && WIRE_ID.test(value);
}
