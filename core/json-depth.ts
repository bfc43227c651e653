const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * Whether JSON text nests arrays and objects more than `limit` levels deep (`{}` is one level), measured
 * on the text: brackets inside strings do not count. `JSON.parse` reads any depth, but writing the value
 * again (`JSON.stringify`, which every size check uses) recurses and throws past a few thousand levels, so
 * text from outside the daemon is measured before anything depends on its value.
 */
export function exceedsJsonDepth(text: string, limit: number): boolean {
  // Text this short cannot open more than `limit` levels and close them again.
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === BACKSLASH) i++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
