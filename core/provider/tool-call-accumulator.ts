import { newId } from '../ids.js';
import { PROFILE_LIMITS } from '../limits.js';
import { ArgumentsText } from './arguments-text.js';
import type { ToolCall } from './chat-provider.js';
import { ProviderError } from './provider-error.js';

interface PartialCall {
  /** The delta `index` the call was opened under; null when deltas carry none. */
  readonly index: number | null;
  /** Opened from the legacy `function_call` member. */
  readonly legacy: boolean;
  id: string | null;
  name: string | null;
  readonly arguments: ArgumentsText;
  /** The bound the call passed, after which none of its arguments are kept; null within them. */
  exceeds: ToolCall['exceeds'] | null;
}

/** The bounds of one round's calls (PROVIDER_LIMITS names them). */
export interface ToolCallBounds {
  /** Calls the round runs; later ones are listed to be answered with an error. */
  runCalls: number;
  /** Calls the round may list at all; one more is a stream too large. */
  listedCalls: number;
  /** UTF-8 bytes of one call's arguments. */
  callArgumentBytes: number;
  /** UTF-8 bytes of the arguments of all the round's calls. */
  roundArgumentBytes: number;
}

/**
 * Assembles a round's tool calls from streamed deltas, as servers really send them (notes: the
 * standard, then every divergence seen in the wild):
 *
 * - a delta belongs to the latest call opened at its `index` (the latest call at all when it has none),
 *   unless it shows it is another call: a different nonempty id, a different nonempty name, or, without
 *   an id, a name with a new JSON value while the current call's arguments are already complete;
 * - ids and names are assigned, never concatenated (servers repeat them on every delta); blank ones are
 *   ignored;
 * - `arguments` fragments are concatenated; an object is serialized; a new JSON value arriving after
 *   complete arguments (a `{}` placeholder, then the full JSON) replaces them;
 * - `type` is ignored, and the legacy `function_call` counts only in a round without `tool_calls`.
 *
 * Calls are final only in `finish`, at the end of the stream: never when the arguments first parse.
 * A call past the calls a round runs, or whose arguments pass their bound or the round's, keeps no
 * arguments and is marked so: it fails as that call, the round goes on.
 */
export class ToolCallAccumulator {
  readonly #bounds: ToolCallBounds;
  readonly #calls: PartialCall[] = [];
  readonly #latestAtIndex = new Map<number, PartialCall>();
  #latestLegacy: PartialCall | null = null;
  /** UTF-8 bytes of the arguments kept, all calls together. */
  #argumentBytes = 0;

  constructor(bounds: ToolCallBounds) {
    this.#bounds = bounds;
  }

  /** One chunk's `delta.tool_calls`; returns how many calls it opened. */
  addToolCalls(deltas: unknown): number {
    if (!Array.isArray(deltas)) return 0;
    let opened = 0;
    for (const delta of deltas) {
      if (isRecord(delta) && this.#apply(delta, isRecord(delta.function) ? delta.function : {}, false)) {
        opened++;
      }
    }
    return opened;
  }

  /** One chunk's legacy `delta.function_call`; returns how many calls it opened (0 or 1). */
  addFunctionCall(functionCall: unknown): number {
    if (!isRecord(functionCall)) return 0;
    return this.#apply({}, functionCall, true) ? 1 : 0;
  }

  /** The finished calls, in the order they were opened. */
  finish(): ToolCall[] {
    const modern = this.#calls.filter((call) => !call.legacy);
    const calls = modern.length > 0 ? modern : this.#calls;
    const ids = new Set<string>();
    return calls.map((call) => {
      if (call.name === null) throw new ProviderError('malformed_stream');
      let id = call.id;
      if (id === null || ids.has(id) || Buffer.byteLength(id) > PROFILE_LIMITS.provider_call_id_bytes) {
        id = newId('call');
      }
      ids.add(id);
      if (call.exceeds !== null) return { id, name: call.name, arguments: '{}', exceeds: call.exceeds };
      const text = call.arguments.text;
      return { id, name: call.name, arguments: text.trim() === '' ? '{}' : text };
    });
  }

  /** Returns whether the delta opened a call. */
  #apply(delta: Record<string, unknown>, fn: Record<string, unknown>, legacy: boolean): boolean {
    const index = legacy || typeof delta.index !== 'number' ? null : delta.index;
    const id = nonBlank(delta.id);
    const name = nonBlank(fn.name);
    const args = fn.arguments;
    if (id === null && name === null && !carriesArguments(args)) return false;

    let call = legacy
      ? this.#latestLegacy
      : index === null
        ? (this.#calls.findLast((candidate) => !candidate.legacy) ?? null)
        : (this.#latestAtIndex.get(index) ?? null);
    if (call !== null && startsAnotherCall(call, id, name, args)) call = null;
    const opened = call === null;
    if (call === null) {
      const count = this.#calls.length;
      if (count >= this.#bounds.listedCalls) throw new ProviderError('too_large');
      const exceeds = count >= this.#bounds.runCalls ? 'round_calls' : null;
      call = { index, legacy, id: null, name: null, arguments: new ArgumentsText(), exceeds };
      this.#calls.push(call);
      if (legacy) this.#latestLegacy = call;
      else if (index !== null) this.#latestAtIndex.set(index, call);
    }
    if (id !== null) call.id = id;
    if (name !== null) call.name = name;
    this.#appendArguments(call, args);
    return opened;
  }

  #appendArguments(call: PartialCall, args: unknown): void {
    if (call.exceeds !== null) return;
    let replacement: string | null = null;
    let fragment = '';
    if (typeof args === 'object' && args !== null) {
      replacement = JSON.stringify(args);
    } else if (typeof args === 'string' && args !== '') {
      // Complete arguments cannot be continued: a new value after them restates them.
      if (opensValue(args) && call.arguments.complete) replacement = args;
      else fragment = args;
    }
    if (replacement === null && fragment === '') return;
    const before = call.arguments.bytes;
    const after =
      replacement !== null ? Buffer.byteLength(replacement) : before + call.arguments.bytesOf(fragment);
    if (
      after > this.#bounds.callArgumentBytes ||
      this.#argumentBytes - before + after > this.#bounds.roundArgumentBytes
    ) {
      this.#argumentBytes -= before;
      call.arguments.replace('');
      call.exceeds = 'arguments';
      return;
    }
    this.#argumentBytes += after - before;
    if (replacement !== null) call.arguments.replace(replacement);
    else call.arguments.append(fragment);
  }
}

function startsAnotherCall(
  call: PartialCall,
  id: string | null,
  name: string | null,
  args: unknown,
): boolean {
  if (id !== null && call.id !== null && id !== call.id) return true;
  if (name !== null && call.name !== null && name !== call.name) return true;
  return (
    id === null &&
    name !== null &&
    opensValue(args) &&
    call.arguments.complete &&
    call.arguments.text.trim() !== '{}'
  );
}

function carriesArguments(args: unknown): boolean {
  return (typeof args === 'string' && args !== '') || (typeof args === 'object' && args !== null);
}

/** Whether `args` begins a JSON object or array (or is one already). */
function opensValue(args: unknown): boolean {
  if (typeof args === 'object' && args !== null) return true;
  if (typeof args !== 'string') return false;
  const first = args.trimStart()[0];
  return first === '{' || first === '[';
}

function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
