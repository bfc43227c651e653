/**
 * The one documented shape of reasoning summaries the adapter reads: OpenRouter's `reasoning_details`
 * array of a stream delta, whose items of type `reasoning.summary` carry the summary in `summary`, in
 * fragments that share the item's `index`. Items of type `reasoning.encrypted` are reasoning the provider
 * withheld (encrypted or redacted). Generic reasoning text (`reasoning_content`, `reasoning`,
 * `reasoning.text` items, `<think>`) is never a summary.
 */
const SUMMARY = 'reasoning.summary';
const WITHHELD = 'reasoning.encrypted';

export interface ReasoningSummary {
  text: string;
  /** The provider withheld reasoning in this round before the summary was complete. */
  redacted: boolean;
  /** The summary outgrew the characters kept of one. */
  truncated: boolean;
}

interface Item {
  index: number | null;
  text: string;
  truncated: boolean;
}

/** Collects one round's summary items from their fragments; each is handed out whole once complete. */
export class ReasoningSummaries {
  readonly #maxChars: number;
  #item: Item | null = null;
  #withheld = false;

  constructor(maxChars: number) {
    this.#maxChars = maxChars;
  }

  /** One delta's `reasoning_details`; returns the summaries it completed (a new item ends the one before). */
  push(details: unknown): ReasoningSummary[] {
    if (!Array.isArray(details)) return [];
    const completed: ReasoningSummary[] = [];
    for (const detail of details) {
      if (typeof detail !== 'object' || detail === null) continue;
      const { type, summary, index } = detail as Record<string, unknown>;
      if (type === WITHHELD) this.#withheld = true;
      if (type !== SUMMARY || typeof summary !== 'string') continue;
      const itemIndex = typeof index === 'number' ? index : null;
      if (this.#item && this.#item.index !== itemIndex) {
        const done = this.flush();
        if (done) completed.push(done);
      }
      this.#item ??= { index: itemIndex, text: '', truncated: false };
      this.#append(this.#item, summary);
    }
    return completed;
  }

  /** The summary in progress is complete (the answer or a tool call began, or the round ended); or null. */
  flush(): ReasoningSummary | null {
    const item = this.#item;
    this.#item = null;
    if (!item || item.text === '') return null;
    return { text: item.text, redacted: this.#withheld, truncated: item.truncated };
  }

  #append(item: Item, fragment: string): void {
    const next = appendWithin(item, fragment, this.#maxChars);
    item.text = next.text;
    item.truncated = next.truncated;
  }
}

/** `fragment` added to a summary kept to `maxChars` characters: what fits, and whether anything did not. */
export function appendWithin(
  summary: { text: string; truncated: boolean },
  fragment: string,
  maxChars: number,
): { text: string; truncated: boolean } {
  if (summary.truncated) return summary;
  const room = maxChars - summary.text.length;
  if (fragment.length <= room) return { text: summary.text + fragment, truncated: false };
  let kept = fragment.slice(0, room);
  // Never keep half of a surrogate pair.
  if (/[\ud800-\udbff]$/.test(kept)) kept = kept.slice(0, -1);
  return { text: summary.text + kept, truncated: true };
}
