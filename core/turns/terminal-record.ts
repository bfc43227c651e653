import type { PlanStep } from '../agent/plan.js';
import { ERROR_MESSAGES } from '../errors.js';
import { idLength } from '../ids.js';
import { PROFILE_LIMITS } from '../limits.js';
import { utf8ByteLength } from '../resources/unicode.js';
import type { ExternalEffects } from '../tool-results/external-effects.js';
import { TURN_FAILURE_CODES, TURN_STATUSES } from './turn-failure.js';

/** One call as the terminal record lists it; `tool` for a call of a built-in or MCP tool. */
export interface TerminalCall {
  call_id: string;
  tool?: string;
  status: string;
  external_effects: ExternalEffects;
}

function encodedBytes(value: unknown): number {
  return utf8ByteLength(JSON.stringify(value));
}

/** The value of `values` that takes the most bytes encoded. */
function largest<T>(values: readonly T[]): T {
  return values.reduce((most, value) => (encodedBytes(value) > encodedBytes(most) ? value : most));
}

/** The bytes `"name":value` adds to an object that already has members, its comma included. */
function memberBytes(name: string, value: unknown): number {
  return encodedBytes({ [name]: value }) - 1;
}

/** How a turn can end, as its terminal says it: a failure with each of its codes, or without an error. */
const ENDINGS = [
  ...TURN_STATUSES.filter((status) => status !== 'failed').map((status) => ({ status, error: null })),
  ...TURN_FAILURE_CODES.map((code) => ({ status: 'failed', error: { code, message: ERROR_MESSAGES[code] } })),
];

/**
 * The most UTF-8 bytes a terminal payload takes, encoded, whoever receives it: the longest turn id, ending
 * and drop count, and what the answer and the manifest take together. The answer's budget (encoded as a
 * JSON string) is 20,000 bytes less the manifest field the turn's events carry, so that the two share
 * 20,000 bytes; but a turn started without the profile has the whole budget, and a receiver that selected
 * the profile is given `"application_manifest":null` besides.
 */
export const TERMINAL_PAYLOAD_BYTES =
  encodedBytes({
    turn_id: 't'.repeat(idLength('turn')),
    ...largest(ENDINGS),
    assistant_text: '',
    activity_dropped: Number.MAX_SAFE_INTEGER,
  }) -
  encodedBytes('') +
  PROFILE_LIMITS.assistant_text_bytes +
  memberBytes('application_manifest', null);

/** Entries of one array member of the record, and what those kept take inside its brackets. */
class FittedList<T> {
  readonly #entries: readonly T[];
  readonly #sizes: number[];
  readonly #kept: boolean[];
  #keptCount: number;
  #keptBytes: number;

  constructor(entries: readonly T[]) {
    this.#entries = entries;
    this.#sizes = entries.map(encodedBytes);
    this.#kept = entries.map(() => true);
    this.#keptCount = entries.length;
    this.#keptBytes = this.#sizes.reduce((sum, size) => sum + size, 0);
  }

  /** Bytes between the brackets: the kept entries and the commas between them. */
  get bytes(): number {
    return this.#keptBytes + Math.max(0, this.#keptCount - 1);
  }

  get omitted(): number {
    return this.#entries.length - this.#keptCount;
  }

  drop(index: number): void {
    this.#kept[index] = false;
    this.#keptCount -= 1;
    this.#keptBytes -= this.#sizes[index]!;
  }

  get kept(): T[] {
    return this.#entries.filter((_, index) => this.#kept[index]);
  }
}

/** Indexes of `entries` that satisfy `test`, the last first. */
function fromLast<T>(entries: readonly T[], test: (entry: T) => boolean): number[] {
  return entries.flatMap((entry, index) => (test(entry) ? [index] : [])).reverse();
}

/**
 * The `data` of a terminal record: `payload`, exactly as the live terminal carries it, then the turn's
 * `calls` and, when it kept one, its `plan`, as far as they fit `maxBytes` encoded. When not everything
 * fits, entries are left out in this order, each group from its last entry: the calls whose outcome is
 * recorded (`reported`: their `turn.call_result` records keep it), then the plan's steps, then the other
 * calls. `calls_omitted` and `plan_omitted` count the entries left out, present only when some were. The
 * payload itself always fits the terminal's bound (TERMINAL_PAYLOAD_BYTES against TERMINAL_DATA_BYTES).
 */
export function terminalData(
  payload: Record<string, unknown>,
  calls: readonly TerminalCall[],
  plan: readonly PlanStep[] | null,
  maxBytes: number,
): Record<string, unknown> {
  const fittedCalls = new FittedList(calls);
  const fittedSteps = new FittedList(plan ?? []);
  const base = encodedBytes({ ...payload, calls: [], ...(plan ? { plan: [] } : {}) });
  const size = () =>
    base +
    fittedCalls.bytes +
    fittedSteps.bytes +
    (fittedCalls.omitted > 0 ? memberBytes('calls_omitted', fittedCalls.omitted) : 0) +
    (fittedSteps.omitted > 0 ? memberBytes('plan_omitted', fittedSteps.omitted) : 0);
  const reported = (call: TerminalCall) => call.external_effects === 'reported';
  const leftOut: Array<() => void> = [
    ...fromLast(calls, reported).map((index) => () => fittedCalls.drop(index)),
    ...fromLast(plan ?? [], () => true).map((index) => () => fittedSteps.drop(index)),
    ...fromLast(calls, (call) => !reported(call)).map((index) => () => fittedCalls.drop(index)),
  ];
  for (const leaveOut of leftOut) {
    if (size() <= maxBytes) break;
    leaveOut();
  }
  return {
    ...payload,
    calls: fittedCalls.kept,
    ...(fittedCalls.omitted > 0 ? { calls_omitted: fittedCalls.omitted } : {}),
    ...(plan ? { plan: fittedSteps.kept } : {}),
    ...(fittedSteps.omitted > 0 ? { plan_omitted: fittedSteps.omitted } : {}),
  };
}
