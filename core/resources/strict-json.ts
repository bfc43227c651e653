import { isWellFormedText } from './unicode.js';

/**
 * An RFC 8259 parser for content the daemon must read exactly: tool contracts. `JSON.parse` keeps the
 * last of two equal member names without telling anyone; this parser refuses them, at any depth, after
 * escape decoding (`"a"` and `"\u0061"` are the same name).
 *
 * Accepted is exactly RFC 8259 text: one value with optional surrounding whitespace (space, tab, LF, CR),
 * no byte order mark, no comments, no trailing commas, no leading zeros, no unescaped control characters.
 * Beyond the grammar it refuses
 * - duplicate member names (`duplicate_member`);
 * - nesting deeper than the depth bound (`too_deep`), counted in arrays and objects: `[]` is depth 1;
 * - strings, values or names, that decode to a lone surrogate (`lone_surrogate`), escaped or raw: such a
 *   string has no UTF-8 encoding, so it could not be forwarded or hashed as received.
 * For every document it accepts, the result deep-equals `JSON.parse` of the same text (a member named
 * `__proto__` is an own data property, as there).
 */
export type StrictJsonFailure = 'syntax' | 'duplicate_member' | 'too_deep' | 'lone_surrogate';

const FAILURE_MESSAGES: Record<StrictJsonFailure, string> = {
  syntax: 'the text is not valid JSON',
  duplicate_member: 'an object repeats a member name',
  too_deep: 'the JSON value is nested too deeply',
  lone_surrogate: 'a JSON string contains a lone surrogate',
};

export class StrictJsonError extends Error {
  readonly reason: StrictJsonFailure;
  /** UTF-16 offset in the text where the failure was detected. */
  readonly offset: number;

  constructor(reason: StrictJsonFailure, offset: number) {
    super(FAILURE_MESSAGES[reason]);
    this.name = 'StrictJsonError';
    this.reason = reason;
    this.offset = offset;
  }
}

/** Nesting bound when the caller sets none; deep enough for any contract, shallow enough for the stack. */
export const STRICT_JSON_DEFAULT_MAX_DEPTH = 64;

export interface StrictJsonOptions {
  maxDepth?: number;
}

export function parseStrictJson(text: string, options: StrictJsonOptions = {}): unknown {
  if (typeof text !== 'string') throw new StrictJsonError('syntax', 0);
  return new StrictJsonParser(text, options.maxDepth ?? STRICT_JSON_DEFAULT_MAX_DEPTH).parseDocument();
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x22, '"'],
  [0x5c, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
]);

function isDigit(code: number): boolean {
  return code >= DIGIT_0 && code <= DIGIT_9;
}

/** One or more JSON whitespace characters (space, tab, LF, CR), matched where `lastIndex` points. */
const WHITESPACE_RUN = /[ \t\n\r]+/y;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  return -1;
}

function setMember(target: Record<string, unknown>, name: string, value: unknown): void {
  if (name === '__proto__') {
    Object.defineProperty(target, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    target[name] = value;
  }
}

class StrictJsonParser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  parseDocument(): unknown {
    this.skipWhitespace();
    const value = this.parseValue(0);
    this.skipWhitespace();
    if (this.pos !== this.text.length) this.fail('syntax');
    return value;
  }

  private fail(reason: StrictJsonFailure, offset: number = this.pos): never {
    throw new StrictJsonError(reason, offset);
  }

  private code(): number {
    return this.text.charCodeAt(this.pos);
  }

  private skipWhitespace(): void {
    // Contracts are often indented: a sticky regular expression skips a run of whitespace natively.
    WHITESPACE_RUN.lastIndex = this.pos;
    if (WHITESPACE_RUN.test(this.text)) this.pos = WHITESPACE_RUN.lastIndex;
  }

  private parseValue(depth: number): unknown {
    const code = this.code();
    if (code === OPEN_BRACE) return this.parseObject(depth + 1);
    if (code === OPEN_BRACKET) return this.parseArray(depth + 1);
    if (code === QUOTE) return this.parseString();
    if (code === MINUS || isDigit(code)) return this.parseNumber();
    if (this.text.startsWith('true', this.pos)) return this.literal(4, true);
    if (this.text.startsWith('false', this.pos)) return this.literal(5, false);
    if (this.text.startsWith('null', this.pos)) return this.literal(4, null);
    return this.fail('syntax');
  }

  private literal<T>(length: number, value: T): T {
    this.pos += length;
    return value;
  }

  private enter(depth: number): void {
    if (depth > this.maxDepth) this.fail('too_deep');
    this.pos++;
    this.skipWhitespace();
  }

  private parseObject(depth: number): Record<string, unknown> {
    this.enter(depth);
    const result: Record<string, unknown> = {};
    if (this.code() === CLOSE_BRACE) {
      this.pos++;
      return result;
    }
    for (;;) {
      if (this.code() !== QUOTE) this.fail('syntax');
      const nameOffset = this.pos;
      const name = this.parseString();
      if (Object.hasOwn(result, name)) this.fail('duplicate_member', nameOffset);
      this.skipWhitespace();
      if (this.code() !== COLON) this.fail('syntax');
      this.pos++;
      this.skipWhitespace();
      setMember(result, name, this.parseValue(depth));
      this.skipWhitespace();
      const code = this.code();
      this.pos++;
      if (code === CLOSE_BRACE) return result;
      if (code !== COMMA) this.fail('syntax', this.pos - 1);
      this.skipWhitespace();
    }
  }

  private parseArray(depth: number): unknown[] {
    this.enter(depth);
    const result: unknown[] = [];
    if (this.code() === CLOSE_BRACKET) {
      this.pos++;
      return result;
    }
    for (;;) {
      result.push(this.parseValue(depth));
      this.skipWhitespace();
      const code = this.code();
      this.pos++;
      if (code === CLOSE_BRACKET) return result;
      if (code !== COMMA) this.fail('syntax', this.pos - 1);
      this.skipWhitespace();
    }
  }

  private parseString(): string {
    const text = this.text;
    const start = this.pos;
    let pos = start + 1;
    let chunkStart = pos;
    let decoded = '';
    for (;;) {
      if (pos >= text.length) this.fail('syntax', pos);
      const code = text.charCodeAt(pos);
      if (code === QUOTE) break;
      if (code < 0x20) this.fail('syntax', pos);
      if (code !== BACKSLASH) {
        pos++;
        continue;
      }
      decoded += text.slice(chunkStart, pos);
      const escaped = text.charCodeAt(pos + 1);
      const simple = SIMPLE_ESCAPES.get(escaped);
      if (simple !== undefined) {
        decoded += simple;
        pos += 2;
      } else if (escaped === 0x75) {
        decoded += String.fromCharCode(this.hex4(pos + 2));
        pos += 6;
      } else {
        this.fail('syntax', pos);
      }
      chunkStart = pos;
    }
    decoded += text.slice(chunkStart, pos);
    this.pos = pos + 1;
    if (!isWellFormedText(decoded)) this.fail('lone_surrogate', start);
    return decoded;
  }

  private hex4(at: number): number {
    let value = 0;
    for (let i = 0; i < 4; i++) {
      const digit = hexValue(this.text.charCodeAt(at + i));
      if (digit < 0) this.fail('syntax', at + i);
      value = value * 16 + digit;
    }
    return value;
  }

  private parseNumber(): number {
    const text = this.text;
    const start = this.pos;
    let pos = start;
    if (text.charCodeAt(pos) === MINUS) pos++;
    const first = text.charCodeAt(pos);
    if (first === DIGIT_0) {
      pos++;
    } else if (isDigit(first)) {
      while (isDigit(text.charCodeAt(pos))) pos++;
    } else {
      this.fail('syntax', pos);
    }
    if (text.charCodeAt(pos) === DOT) {
      pos++;
      pos = this.digits(pos);
    }
    const exponent = text.charCodeAt(pos);
    if (exponent === 0x65 || exponent === 0x45) {
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === PLUS || sign === MINUS) pos++;
      pos = this.digits(pos);
    }
    this.pos = pos;
    return Number(text.slice(start, pos));
  }

  /** One or more digits from `pos`; returns the position after them. */
  private digits(pos: number): number {
    if (!isDigit(this.text.charCodeAt(pos))) this.fail('syntax', pos);
    let end = pos;
    while (isDigit(this.text.charCodeAt(end))) end++;
    return end;
  }
}
