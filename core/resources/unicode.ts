/**
 * Text checks shared by the resource rules. Every string the daemon hashes, measures or forwards must be
 * well-formed Unicode: a lone surrogate has no UTF-8 encoding, so Node would silently replace it with U+FFFD
 * and the bytes measured or hashed would differ from the text received.
 */
declare global {
  interface String {
    /** ES2024, in V8 since Node 20; TypeScript's ES2023 library does not declare it. */
    isWellFormed(): boolean;
  }
}

export function isWellFormedText(text: string): boolean {
  return text.isWellFormed();
}

export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Unicode scalar values, the unit of a schema's `maxLength`. */
export function scalarCount(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes exact UTF-8 or returns null: overlong forms, encoded surrogates and truncated sequences fail.
 * A byte order mark is kept as U+FEFF rather than stripped, so the text is exactly the bytes.
 */
export function decodeUtf8Exact(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Encodes well-formed text; throws on a lone surrogate instead of substituting U+FFFD. */
export function encodeUtf8Exact(text: string): Buffer {
  if (!isWellFormedText(text)) throw new TypeError('text is not well-formed Unicode');
  return Buffer.from(text, 'utf8');
}

/**
 * The longest beginning of `text` that takes at most `maxBytes` in UTF-8, cut between characters (never
 * inside one, nor between the halves of a surrogate pair).
 */
export function cutUtf8(text: string, maxBytes: number): string {
  if (utf8ByteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    const size = utf8ByteLength(character);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += character.length;
  }
  return text.slice(0, end);
}
