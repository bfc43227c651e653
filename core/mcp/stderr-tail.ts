import { MCP_SUPERVISION } from './mcp-limits.js';

/** What a secret is replaced by in the lines logged. */
const REDACTED = '[redacted]';

/** Values shorter than this are too common to be secrets and would blank out ordinary words. */
const SECRET_MIN_CHARACTERS = 6;

/**
 * The last `stderr_bytes` a child wrote to stderr, kept in memory for the log line written when it exits
 * or fails. Nothing else of what it writes is kept or shown.
 */
export class StderrTail {
  readonly #secrets: string[];
  #chunks: Buffer[] = [];
  #bytes = 0;
  #cut = false;

  /** `secrets` (the values the child was given) never appear in the lines. */
  constructor(secrets: Iterable<string>) {
    this.#secrets = [...new Set(secrets)]
      .filter((secret) => secret.length >= SECRET_MIN_CHARACTERS)
      .sort((a, b) => b.length - a.length);
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

  #redact(line: string): string {
    let redacted = line;
    for (const secret of this.#secrets) redacted = redacted.split(secret).join(REDACTED);
    return redacted;
  }
}
