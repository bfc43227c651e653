/** Shifted items are only compacted away once this many have gone, and they are half the array. */
const COMPACT_AFTER = 1_024;

/**
 * A first-in first-out queue over an array: shifting moves a head index and drops the item's reference,
 * and the array is compacted now and then, so a long-lived queue costs one slot per item it holds.
 */
export class Queue<T> {
  #items: Array<T | undefined> = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  peek(): T | undefined {
    return this.#items[this.#head];
  }

  shift(): T | undefined {
    if (this.#head === this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head++;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > COMPACT_AFTER && this.#head * 2 > this.#items.length) {
      this.#items.splice(0, this.#head);
      this.#head = 0;
    }
    return item;
  }

  /** Keeps only the items `keep` accepts, in their order. */
  retain(keep: (item: T) => boolean): void {
    const kept: T[] = [];
    for (let index = this.#head; index < this.#items.length; index++) {
      const item = this.#items[index] as T;
      if (keep(item)) kept.push(item);
    }
    this.#items = kept;
    this.#head = 0;
  }
}
