import { MCP_SUPERVISION } from './mcp-limits.js';

/**
 * The last `stderr_bytes` a child wrote to stderr, kept in memory for the log line written when it exits
 * or fails and for its `status` reason. Nothing else of what it writes is kept or shown.
 */
export class StderrTail {
  readonly #redact: (line: string) => string;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #cut = false;

  /** `redact` replaces the secrets in each line (`ServerText.redact`). */
  constructor(redact: (line: string) => string) {
    this.#redact = redact;
  }

  append(chunk: Buffer): void {
    const limit = MCP_SUPERVISION.stderr_bytes;
    this.#chunks.push(chunk.length > limit ? chunk.subarray(chunk.length - limit) : chunk);
    this.#bytes += Math.min(chunk.length, limit);
    if (chunk.length > limit) this.#cut = true;
    while (this.#bytes > limit) {
      const first = this.#chunks[0]!;
      const over = this.#bytes - limit;
      this.#cut = true;
      if (first.length <= over) {
        this.#chunks.shift();
        this.#bytes -= first.length;
      } else {
        this.#chunks[0] = first.subarray(over);
        this.#bytes -= over;
      }
    }
  }

  /** The last `stderr_log_lines` non-blank lines, secrets replaced; a line cut at the front is left out. */
  lines(): string[] {
    const lines = Buffer.concat(this.#chunks)
      .toString('utf8')
      .split(/\r?\n|\r/);
    if (this.#cut) lines.shift();
    return lines
      .filter((line) => line.trim() !== '')
      .slice(-MCP_SUPERVISION.stderr_log_lines)
      .map((line) => this.#redact(line));
  }
}
