import type {
  CarriedPart,
  ProviderEvent,
  ProviderRound,
  ProviderUsage,
  RoundCarry,
} from './chat-provider.js';
import { ProviderError } from './provider-error.js';
import type { RoundOutputBounds } from './provider-limits.js';
import { ToolCallAccumulator } from './tool-call-accumulator.js';

/**
 * What an API's assembler builds of one round, each part within its bound: the answer text, the calls
 * (through the accumulator, which marks those past their bounds), and the output in order with the
 * reasoning the API wants back unchanged. Events go to `emit` as they are accepted.
 */
export class RoundOutput {
  readonly #emit: (event: ProviderEvent) => void;
  readonly #bounds: RoundOutputBounds;
  readonly #calls: ToolCallAccumulator;
  readonly #parts: CarriedPart[] = [];
  #text = '';
  #textBytes = 0;
  #carriedBytes = 0;
  #reasoningParts = 0;
  /** The text part later text joins, or null when the next text starts one. */
  #textPart: { kind: 'text'; text: string } | null = null;
  #callCount = 0;

  constructor(emit: (event: ProviderEvent) => void, bounds: RoundOutputBounds) {
    this.#emit = emit;
    this.#bounds = bounds;
    this.#calls = new ToolCallAccumulator(bounds);
  }

  /** Summaries are read only when the provider is configured as sending them. */
  get readsSummaries(): boolean {
    return this.#bounds.summaryChars !== null;
  }

  get summaryChars(): number {
    return this.#bounds.summaryChars ?? 0;
  }

  /** The next text begins a part of its own (another output item or block began). */
  breakText(): void {
    this.#textPart = null;
  }

  text(delta: string): void {
    if (delta === '') return;
    this.#textBytes += Buffer.byteLength(delta);
    if (this.#textBytes > this.#bounds.textBytes) throw new ProviderError('too_large');
    this.#text += delta;
    if (this.#textPart === null) {
      this.#textPart = { kind: 'text', text: '' };
      this.#parts.push(this.#textPart);
    }
    this.#textPart.text += delta;
    this.#emit({ kind: 'text', delta });
  }

  reasoning(delta: string): void {
    if (delta !== '') this.#emit({ kind: 'reasoning', delta });
  }

  summary(text: string, truncated: boolean, redacted: boolean): void {
    if (text !== '') this.#emit({ kind: 'reasoning_summary', text, redacted, truncated });
  }

  /** A call begins; returns its number in the round, by which its arguments are added. */
  openCall(id: string | null, name: string | null, args?: unknown): number {
    const index = this.#callCount++;
    this.breakText();
    this.#parts.push({ kind: 'call', index });
    this.#calls.addToolCalls([{ index, id, function: { name, arguments: args } }]);
    this.#emit({ kind: 'tool_call_started' });
    return index;
  }

  callArguments(index: number, fragment: string): void {
    this.#calls.addToolCalls([{ index, function: { arguments: fragment } }]);
  }

  /** Reasoning to carry unchanged, in its place among the output; returns its handle for `extendReasoning`. */
  carryReasoning(item: Record<string, unknown>): number {
    this.breakText();
    this.#charge(Buffer.byteLength(JSON.stringify(item)));
    this.#parts.push({ kind: 'reasoning', item });
    this.#reasoningParts++;
    return this.#parts.length - 1;
  }

  /** Appends `fragment` to the string member `key` of carried reasoning (a thinking text, a signature). */
  extendReasoning(handle: number, key: string, fragment: string): void {
    const part = this.#parts[handle];
    if (part?.kind !== 'reasoning' || fragment === '') return;
    // Escaped as JSON, as the next request carries it.
    this.#charge(JSON.stringify(fragment).length - 2);
    const item = part.item as Record<string, unknown>;
    item[key] = `${typeof item[key] === 'string' ? item[key] : ''}${fragment}`;
  }

  /** The finished round; its output is carried when it holds reasoning or when `carryAll` says so. */
  round(
    api: RoundCarry['api'],
    finishReason: string | null,
    usage: ProviderUsage | null,
    options: { paused?: boolean; carryAll?: boolean } = {},
  ): ProviderRound {
    const toolCalls = this.#calls.finish();
    const carried = this.#reasoningParts > 0 || options.carryAll === true;
    return {
      text: this.#text,
      toolCalls,
      finishReason,
      usage,
      ...(carried ? { carry: { api, parts: this.#parts } } : {}),
      ...(options.paused ? { paused: true } : {}),
    };
  }

  #charge(bytes: number): void {
    this.#carriedBytes += bytes;
    if (this.#carriedBytes > this.#bounds.carriedBytes) throw new ProviderError('too_large');
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A token count a server reported, or null for anything else. */
export function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}
