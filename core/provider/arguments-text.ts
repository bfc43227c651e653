/** What String.prototype.trimEnd removes. */
const WHITE_SPACE = /^\s$/u;

/**
 * A tool call's arguments text as its fragments arrive, and whether it is a whole JSON object or array so
 * far. The check is asked at almost every fragment, so it must not read the whole text each time: the
 * text is scanned once, fragment by fragment, for where its outermost value closes (brackets counted
 * outside strings), and only a text that ends right there is parsed, once, to be sure. A text with
 * anything but whitespace after its closing bracket can never be one value again.
 */
export class ArgumentsText {
  #text = '';
  /** The text's UTF-8 bytes, counted as it arrives. */
  #bytes = 0;
  /** The last UTF-16 code unit of the text (NaN when empty): read apart, as the text is rarely flat. */
  #lastCode = Number.NaN;
  /** Open brackets outside strings; below zero the text is no value at all. */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The first character that is not whitespace, if any yet. */
  #first: string | null = null;
  /** The outermost value has closed. */
  #closed = false;
  /** Something other than whitespace followed it, or the text cannot be a value. */
  #spoilt = false;
  /** Whether the text parsed, once it closed; null until it is tried. */
  #parses: boolean | null = null;

  get text(): string {
    return this.#text;
  }

  /** UTF-8 bytes of the text, as `Buffer.byteLength` counts them for the whole of it. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The UTF-8 bytes `fragment` would add to the text. */
  bytesOf(fragment: string): number {
    const bytes = Buffer.byteLength(fragment);
    // A surrogate pair cut between fragments is one four-byte character, not two three-byte ones.
    const joinsPair = isHighSurrogate(this.#lastCode) && isLowSurrogate(fragment.charCodeAt(0));
    return joinsPair ? bytes - 2 : bytes;
  }

  append(fragment: string): void {
    if (fragment === '') return;
    this.#bytes += this.bytesOf(fragment);
    this.#lastCode = fragment.charCodeAt(fragment.length - 1);
    this.#text += fragment;
    for (const character of fragment) this.#scan(character);
  }

  replace(text: string): void {
    this.#text = '';
    this.#bytes = 0;
    this.#lastCode = Number.NaN;
    this.#depth = 0;
    this.#inString = false;
    this.#escaped = false;
    this.#first = null;
    this.#closed = false;
    this.#spoilt = false;
    this.#parses = null;
    this.append(text);
  }

  /** Whether the text is a whole JSON object or array (whitespace around it aside). */
  get complete(): boolean {
    if (!this.#closed || this.#spoilt) return false;
    if (this.#parses === null) {
      try {
        JSON.parse(this.#text.trimEnd());
        this.#parses = true;
      } catch {
        this.#parses = false;
      }
    }
    return this.#parses;
  }

  #scan(character: string): void {
    if (this.#spoilt) return;
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (character === '\\') this.#escaped = true;
      else if (character === '"') this.#inString = false;
      return;
    }
    if (character === ' ' || character === '\n' || character === '\r' || character === '\t') return;
    if (this.#closed) {
      // As trimEnd sees it: any white space may follow the value.
      if (!WHITE_SPACE.test(character)) this.#spoilt = true;
      return;
    }
    if (this.#first === null) {
      this.#first = character;
      if (character !== '{' && character !== '[') this.#spoilt = true;
    }
    if (character === '"') this.#inString = true;
    else if (character === '{' || character === '[') this.#depth += 1;
    else if (character === '}' || character === ']') {
      this.#depth -= 1;
      if (this.#depth === 0) this.#closed = true;
      if (this.#depth < 0) this.#spoilt = true;
    }
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
