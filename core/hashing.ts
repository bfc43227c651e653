import { createHash, timingSafeEqual } from 'node:crypto';

export function sha256(data: string | Uint8Array): Buffer {
  return createHash('sha256').update(data).digest();
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A verifier for a secret: only this is kept, never the secret itself. */
export function verifierOf(secret: string): Buffer {
  return sha256(secret);
}

/** Compares a presented secret against a stored verifier in constant time. */
export function matchesVerifier(presented: unknown, verifier: Buffer): boolean {
  if (typeof presented !== 'string') return false;
  return timingSafeEqual(sha256(presented), verifier);
}
