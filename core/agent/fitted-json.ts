import { utf8ByteLength } from '../resources/unicode.js';

/** A tool result built around one text member, and what of that text it kept. */
export interface FittedJson {
  /** The compact JSON, at most the limit's UTF-8 bytes. */
  json: string;
  /** The beginning of the text that `json` carries: all of it unless `truncated`. */
  kept: string;
  truncated: boolean;
}

/**
 * Builds the compact JSON of `shape(text, false)` when it fits `limit` UTF-8 bytes, else of
 * `shape(beginning, true)` with the longest beginning of `text` that makes it fit. The size that counts is
 * the encoded one: JSON escapes a quote, a backslash, a newline or a control character into two to six
 * bytes, so a text of `limit` bytes can encode to six times as many. The text is cut between characters
 * (never between the halves of a surrogate pair), and a lone surrogate, which JSON can carry, is first
 * replaced by U+FFFD as its UTF-8 would be.
 *
 * `shape` may put numbers that depend on the beginning into the result (an offset to read on from): the
 * cut is made again, shorter, until the whole fits. Throws RangeError when not even an empty text fits.
 */
export function fitTextInJson(
  text: string,
  limit: number,
  shape: (text: string, truncated: boolean) => unknown,
): FittedJson {
  const whole = Buffer.from(text, 'utf8').toString('utf8');
  const complete = JSON.stringify(shape(whole, false));
  if (utf8ByteLength(complete) <= limit) return { json: complete, kept: whole, truncated: false };
  let room = limit - utf8ByteLength(JSON.stringify(shape('', true)));
  for (;;) {
    if (room < 0) throw new RangeError('the result does not fit its bound even without its text');
    let kept = escapedBeginning(whole, room);
    // `"truncated":true` may be shorter than its false: a result that is cut never keeps the whole text.
    if (kept.length === whole.length) kept = withoutLastCharacter(kept);
    const json = JSON.stringify(shape(kept, true));
    const over = utf8ByteLength(json) - limit;
    if (over <= 0) return { json, kept, truncated: true };
    room -= over;
  }
}

/**
 * The longest beginning of `text` whose characters take at most `room` bytes once escaped inside a JSON
 * string. JSON escapes each character on its own, so the walk adds them one by one and stops at the bound,
 * however long the text.
 */
function escapedBeginning(text: string, room: number): string {
  let left = room;
  let end = 0;
  for (const character of text) {
    const size = utf8ByteLength(JSON.stringify(character)) - 2;
    if (size > left) break;
    left -= size;
    end += character.length;
  }
  return text.slice(0, end);
}

function withoutLastCharacter(text: string): string {
  const last = text.codePointAt(text.length - 1);
  const isLowSurrogate = last !== undefined && last >= 0xdc00 && last <= 0xdfff && text.length > 1;
  return text.slice(0, text.length - (isLowSurrogate ? 2 : 1));
}
