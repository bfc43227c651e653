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
  if (whole === '') throw new RangeError('the result does not fit its bound even without its text');
  let room = limit - utf8ByteLength(JSON.stringify(shape('', true)));
  // A cut result keeps less than the whole text, even where its own members take fewer bytes than the
  // whole result's (`true` is shorter than `false`).
  const cuttable = whole.slice(0, whole.length - lastCharacterLength(whole));
  for (;;) {
    if (room < 0) throw new RangeError('the result does not fit its bound even without its text');
    const kept = escapedBeginning(cuttable, room);
    const json = JSON.stringify(shape(kept, true));
    const over = utf8ByteLength(json) - limit;
    if (over <= 0) return { json, kept, truncated: true };
    room -= over;
  }
}

/** The UTF-16 length of the text's last character: 2 for a surrogate pair, else 1 (0 for no text). */
function lastCharacterLength(text: string): number {
  if (text.length >= 2 && (text.codePointAt(text.length - 2) ?? 0) > 0xffff) return 2;
  return Math.min(text.length, 1);
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

/** A tool result built around one list member, and how many of its items it kept. */
export interface FittedJsonList {
  /** The compact JSON, at most the limit's UTF-8 bytes. */
  json: string;
  /** How many items, from the first, `json` carries: all of them unless `truncated`. */
  kept: number;
  truncated: boolean;
}

/**
 * As fitTextInJson, for a result whose size comes from a list: the compact JSON of `shape(items, false)`
 * when it fits `limit` UTF-8 bytes, else of `shape(first, true)` with the most items from the first that
 * make it fit. Each item counts as its own compact JSON and a comma; numbers `shape` derives from the
 * items kept (an offset to list on from) are accounted for by cutting again. Throws RangeError when not
 * even an empty list fits.
 */
export function fitListInJson<T>(
  items: readonly T[],
  limit: number,
  shape: (items: readonly T[], truncated: boolean) => unknown,
): FittedJsonList {
  const complete = JSON.stringify(shape(items, false));
  if (utf8ByteLength(complete) <= limit) return { json: complete, kept: items.length, truncated: false };
  if (items.length === 0) throw new RangeError('the result does not fit its bound even without its items');
  let room = limit - utf8ByteLength(JSON.stringify(shape([], true)));
  if (room < 0) throw new RangeError('the result does not fit its bound even without its items');
  // As for a text, a cut list keeps fewer items than the whole.
  let count = 0;
  for (const item of items.slice(0, -1)) {
    const size = utf8ByteLength(JSON.stringify(item)) + (count > 0 ? 1 : 0);
    if (size > room) break;
    room -= size;
    count += 1;
  }
  for (; count >= 0; count -= 1) {
    const json = JSON.stringify(shape(items.slice(0, count), true));
    if (utf8ByteLength(json) <= limit) return { json, kept: count, truncated: true };
  }
  throw new RangeError('the result does not fit its bound even without its items');
}
