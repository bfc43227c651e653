export interface ContentSegment {
  kind: 'text' | 'reasoning';
  text: string;
}

const OPEN = '<think>';
const CLOSE = '</think>';

/**
 * Separates `<think>…</think>` sections from streamed content, wherever the chunk boundaries fall:
 * the tail of a chunk that could begin a tag is held back until the next chunk shows what it is. The
 * tags themselves are dropped; everything else comes out unchanged and in order.
 */
export class ThinkTagSplitter {
  #inside = false;
  #held = '';

  push(content: string): ContentSegment[] {
    const segments: ContentSegment[] = [];
    let rest = this.#held + content;
    this.#held = '';
    for (;;) {
      const tag = this.#inside ? CLOSE : OPEN;
      const at = rest.indexOf(tag);
      if (at === -1) {
        const keep = partialTagLength(rest, tag);
        this.#emit(segments, rest.slice(0, rest.length - keep));
        this.#held = rest.slice(rest.length - keep);
        return segments;
      }
      this.#emit(segments, rest.slice(0, at));
      rest = rest.slice(at + tag.length);
      this.#inside = !this.#inside;
    }
  }

  /** At the end of the stream: what was held back was not a tag after all. */
  flush(): ContentSegment[] {
    const segments: ContentSegment[] = [];
    this.#emit(segments, this.#held);
    this.#held = '';
    return segments;
  }

  #emit(segments: ContentSegment[], text: string): void {
    if (text !== '') segments.push({ kind: this.#inside ? 'reasoning' : 'text', text });
  }
}

/** The length of the longest end of `text` that is a proper beginning of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}
