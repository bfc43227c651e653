import { randomBytes, randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
/** Ids take their bytes from one pool, refilled from the CSPRNG when spent: one call per 256 ids. */
const idPool = Buffer.alloc(ID_BYTES * 256);
let idPoolOffset = idPool.length;

/**
 * Identifiers and secrets. Every id the daemon issues is unpredictable and fits the wire's ID
 * alphabet `[A-Za-z0-9._:-]` (base64url adds only `-` and `_`).
 */
export function newId(prefix: string): string {
  if (idPoolOffset === idPool.length) {
    randomFillSync(idPool);
    idPoolOffset = 0;
  }
  const start = idPoolOffset;
  idPoolOffset += ID_BYTES;
  return `${prefix}_${idPool.toString('base64url', start, idPoolOffset)}`;
}

/** Characters of every id `newId(prefix)` issues: the prefix, `_`, and its bytes in base64url. */
export function idLength(prefix: string): number {
  return prefix.length + 1 + Math.ceil((ID_BYTES * 8) / 6);
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
