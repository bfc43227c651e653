import { utf8ByteLength } from '../resources/unicode.js';

/**
 * Encoded JSON that several retained outcomes hold by reference (a claim's snapshot, the same for every
 * claim of a session until its turn moves on): each bound counts its bytes once, however many hold it.
 */
export class SharedJson {
  readonly json: string;
  readonly bytes: number;

  constructor(json: string) {
    this.json = json;
    this.bytes = utf8ByteLength(json);
  }
}

/**
 * What a spliced result costs beyond its own text: its object and its reference to the shared part, as
 * measured on Node 20 (bench/operation-entry-cost.ts).
 */
export const SPLICE_BYTES = 48;

/** A result retained as its own text around a shared part: `head + shared.json + tail`. */
export class SplicedJson {
  readonly head: string;
  readonly shared: SharedJson;
  readonly tail: string;

  constructor(head: string, shared: SharedJson, tail: string) {
    this.head = head;
    this.shared = shared;
    this.tail = tail;
  }

  /** The bytes this result holds on its own, beside the shared part. */
  get ownBytes(): number {
    return SPLICE_BYTES + utf8ByteLength(this.head) + utf8ByteLength(this.tail);
  }

  get json(): string {
    return this.head + this.shared.json + this.tail;
  }
}

/**
 * What a room or a holder of room retains: outcomes and their bytes, a shared part counted once while any
 * of its outcomes holds it.
 */
export class Usage {
  operations = 0;
  bytes = 0;
  #shared: Map<SharedJson, number> | null = null;

  /** Adds (`sign` 1) or takes off (-1) one outcome of `ownBytes`, holding `shared` if set. */
  add(sign: 1 | -1, ownBytes: number, shared: SharedJson | null): void {
    this.operations += sign;
    this.bytes += sign * ownBytes;
    if (shared === null) return;
    this.#shared ??= new Map();
    const holders = (this.#shared.get(shared) ?? 0) + sign;
    if (holders === 0) this.#shared.delete(shared);
    else this.#shared.set(shared, holders);
    if (holders === 0 || (sign === 1 && holders === 1)) this.bytes += sign * shared.bytes;
  }

  /** Whether it holds `bound` or more, by either count. */
  reaches(bound: { operations: number; bytes: number }): boolean {
    return this.operations >= bound.operations || this.bytes >= bound.bytes;
  }
}
