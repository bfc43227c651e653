/** What a command printed, as much of it as is kept, and how much it printed on each stream. */
export interface CollectedOutput {
  output: string;
  truncated: boolean;
  stdoutBytes: number;
  stderrBytes: number;
}

export type OutputStream = 'stdout' | 'stderr';

/**
 * Collects the chunks of both pipes in arrival order, keeping the first `limit` bytes and only counting
 * the rest, so a command may print any amount without the daemon holding it.
 */
export class OutputCollector {
  readonly #limit: number;
  readonly #kept: Buffer[] = [];
  #keptBytes = 0;
  readonly #bytes = { stdout: 0, stderr: 0 };

  constructor(limit: number) {
    this.#limit = limit;
  }

  add(stream: OutputStream, chunk: Buffer): void {
    this.#bytes[stream] += chunk.length;
    const room = this.#limit - this.#keptBytes;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#kept.push(part);
    this.#keptBytes += part.length;
  }

  result(): CollectedOutput {
    let bytes = Buffer.concat(this.#kept, this.#keptBytes);
    const total = this.#bytes.stdout + this.#bytes.stderr;
    let truncated = total > this.#limit;
    if (truncated) bytes = bytes.subarray(0, completeLength(bytes));
    let output = bytes.toString('utf8');
    // Bytes that are not UTF-8 decode to U+FFFD, three bytes each, so the text can outgrow the bound.
    const encoded = Buffer.from(output, 'utf8');
    if (encoded.length > this.#limit) {
      const fitting = encoded.subarray(0, this.#limit);
      output = fitting.subarray(0, completeLength(fitting)).toString('utf8');
      truncated = true;
    }
    return { output, truncated, stdoutBytes: this.#bytes.stdout, stderrBytes: this.#bytes.stderr };
  }
}

/** The length of `bytes` without a multi-byte UTF-8 sequence left incomplete at its end. */
export function completeLength(bytes: Uint8Array): number {
  const end = bytes.length;
  let start = end - 1;
  while (start >= 0 && end - start < 4 && (bytes[start]! & 0xc0) === 0x80) start -= 1;
  if (start < 0) return end;
  const lead = bytes[start]!;
  const length =
    lead < 0x80
      ? 1
      : (lead & 0xe0) === 0xc0
        ? 2
        : (lead & 0xf0) === 0xe0
          ? 3
          : (lead & 0xf8) === 0xf0
            ? 4
            : 0;
  return length > 0 && start + length > end ? start : end;
}
