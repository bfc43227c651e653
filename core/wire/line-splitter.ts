/**
 * Splits an NDJSON byte stream into lines without ever holding more than one frame's worth of an
 * over-long line: its bytes are dropped as they arrive and the line is reported once, as oversized,
 * when its newline comes.
 */
export type Line = { kind: 'line'; bytes: Buffer } | { kind: 'oversized' };

export class LineSplitter {
  readonly #maxBytes: number;
  #parts: Buffer[] = [];
  #length = 0;
  #discarding = false;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Feeds a chunk; returns the complete lines it finished, in order. Empty lines are skipped. */
  push(chunk: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      if (newline === -1) {
        this.#keep(chunk.subarray(start));
        return lines;
      }
      this.#keep(chunk.subarray(start, newline));
      const line = this.#take();
      if (line) lines.push(line);
      start = newline + 1;
    }
  }

  /** Bytes of an unfinished line currently held (never more than the frame limit). */
  get pendingBytes(): number {
    return this.#length;
  }

  #keep(part: Buffer): void {
    if (part.length === 0 || this.#discarding) return;
    if (this.#length + part.length > this.#maxBytes) {
      this.#discarding = true;
      this.#parts = [];
      this.#length = 0;
      return;
    }
    this.#parts.push(part);
    this.#length += part.length;
  }

  #take(): Line | undefined {
    if (this.#discarding) {
      this.#discarding = false;
      return { kind: 'oversized' };
    }
    if (this.#length === 0) return undefined;
    const bytes = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#length);
    this.#parts = [];
    this.#length = 0;
    return isBlank(bytes) ? undefined : { kind: 'line', bytes };
  }
}

function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes) {
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}
