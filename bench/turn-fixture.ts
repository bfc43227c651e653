/** What the turn bench's provider, its direct loop and its daemon clients agree on. */
export const BENCH_MODEL = 'bench-model';
export const BENCH_TOOL_NAME = 'lookup';
export const BENCH_TOOL_DESCRIPTION = 'Looks a path up.';
/** The arguments the provider's tool call carries. */
export const BENCH_TOOL_ARGUMENTS = '{"path":"a"}';
/** The text the provider answers once the tool's result is in. */
export const BENCH_ANSWER = 'Found it.';
/** The provider's call id is this prefix and the turn's tag. */
export const CALL_ID_PREFIX = 'call-';

export const TOOL_INPUT_SCHEMA = {
  type: 'object',
  properties: { path: { type: 'string', maxLength: 200 } },
  required: ['path'],
  additionalProperties: false,
} as const;

/** The inline tool contract the daemon clients register. */
export const TOOL_CONTRACT = JSON.stringify({
  input_schema: TOOL_INPUT_SCHEMA,
  output_schema: { type: 'object', properties: {}, additionalProperties: false },
});

/** The tool itself, run by both subjects: it answers at once. */
export function lookup(_arguments: unknown): Record<string, never> {
  return {};
}

/** The time and bytes the provider spent on one turn's requests. */
export interface ProviderSpent {
  ns: number;
  bytes: number;
  requests: number;
}

/** One finished turn as a client saw it. */
export interface TurnTiming {
  tag: string;
  /** From the first byte sent to the answer's end (direct) or the terminal event (daemon). */
  wallNs: number;
  /** Time spent running the tool, from the call's arrival to the result's sending. */
  executorNs: number;
  /** When the turn ended, on process.hrtime.bigint(). */
  endedAt: bigint;
}
