/** A push queue read as an async iterator: items in order, then the end or a failure. */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #items: T[] = [];
  #ended = false;
  #failure: Error | null = null;
  #wake: (() => void) | null = null;

  push(item: T): void {
    this.#items.push(item);
    this.#notify();
  }

  end(): void {
    this.#ended = true;
    this.#notify();
  }

  fail(error: Error): void {
    this.#failure ??= error;
    this.#notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.#failure) throw this.#failure;
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
