const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The bytes decoded when they are well-formed UTF-8 (a byte-order mark kept as U+FEFF), else null. */
export function decodeExactUtf8(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}
