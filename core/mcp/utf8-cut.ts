/**
 * `text` in at most `limit` bytes of UTF-8, cut between characters. The result always comes back through
 * a UTF-8 encoding, so a lone surrogate a server sent (JSON can carry one) is U+FFFD, never forwarded.
 */
export function cutUtf8(text: string, limit: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= limit) return { text: bytes.toString('utf8'), cut: false };
  let end = limit;
  // A continuation byte (10xxxxxx) at the cut means a character started before it.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}
