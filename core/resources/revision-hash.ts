import { createHash } from 'node:crypto';
import { sha256Hex } from '../hashing.js';
import type { ResourceKind } from './names.js';
import { encodeUtf8Exact } from './unicode.js';

/**
 * The descriptor hashes (wire-v2 section 8), lowercase hex. `content_sha256` covers the exact captured
 * bytes. `revision_sha256` covers the 28 raw bytes of the domain, then kind, name, description and the
 * captured bytes, each as its byte length in unsigned 64-bit big-endian followed by the bytes; so a
 * metadata-only replacement changes the revision hash and keeps the content hash. Known-answer vectors are
 * in docs/revision-hash-vectors.md.
 */
export const REVISION_HASH_DOMAIN = 'magi-application-resource-v1';

export interface RevisionHashInput {
  kind: ResourceKind;
  name: string;
  description: string;
  captured: Uint8Array;
}

function lengthPrefixed(bytes: Uint8Array): Buffer[] {
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(bytes.length));
  return [length, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)];
}

export function revisionPreimage(input: RevisionHashInput): Buffer {
  return Buffer.concat([
    Buffer.from(REVISION_HASH_DOMAIN, 'utf8'),
    ...lengthPrefixed(encodeUtf8Exact(input.kind)),
    ...lengthPrefixed(encodeUtf8Exact(input.name)),
    ...lengthPrefixed(encodeUtf8Exact(input.description)),
    ...lengthPrefixed(input.captured),
  ]);
}

/** Both hashes a resource descriptor carries for its captured bytes. */
export interface DescriptorHashes {
  /** Lowercase hex SHA-256 of the bytes. */
  contentSha256: string;
  /** The revision hash of the resource with these bytes. */
  revisionSha256: string;
}

/** The same hash as over `revisionPreimage`, fed piece by piece so the captured bytes are not copied. */
export function revisionSha256(input: RevisionHashInput): string {
  const hash = createHash('sha256').update(REVISION_HASH_DOMAIN, 'utf8');
  for (const part of [
    encodeUtf8Exact(input.kind),
    encodeUtf8Exact(input.name),
    encodeUtf8Exact(input.description),
    input.captured,
  ]) {
    for (const piece of lengthPrefixed(part)) hash.update(piece);
  }
  return hash.digest('hex');
}

export function contentSha256(captured: Uint8Array): string {
  return sha256Hex(captured);
}
