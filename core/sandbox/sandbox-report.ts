/** What bwrap's status lines said: whether it made the sandbox's process, and whether the command ran. */
export class SandboxReport {
  #text = '';

  add(chunk: Buffer): void {
    // Two short JSON lines in all; anything longer is not bwrap's.
    if (this.#text.length < 4_096) this.#text += chunk.toString('utf8');
  }

  get started(): boolean {
    return this.#text.includes('"child-pid"');
  }

  get ran(): boolean {
    return this.#text.includes('"exit-code"');
  }
}
