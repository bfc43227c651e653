import type { TextDecoder } from 'node:util';

export interface BoundedBody {
  bytes: Buffer;
  /** The body had more than the bytes kept. */
  longer: boolean;
}

/**
 * Reads `body` until it ends or holds more than `limit` bytes; then leaving the loop ends the stream, so
 * the rest is never read.
 */
export async function readBounded(body: AsyncIterable<Uint8Array>, limit: number): Promise<BoundedBody> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    const room = limit - length;
    if (chunk.byteLength > room) {
      chunks.push(chunk.subarray(0, room));
      return { bytes: Buffer.concat(chunks), longer: true };
    }
    chunks.push(chunk);
    length += chunk.byteLength;
  }
  return { bytes: Buffer.concat(chunks), longer: false };
}

/**
 * Decodes `bytes`; when the body was cut, a character split at the cut is left out rather than shown as a
 * replacement character.
 */
export function decodeBody(decoder: TextDecoder, body: BoundedBody): string {
  return decoder.decode(body.bytes, { stream: body.longer });
}
