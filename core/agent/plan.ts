import { utf8ByteLength } from '../resources/unicode.js';
import { BUILTIN_LIMITS } from './builtin-limits.js';
import type { PLAN_STATUSES } from './builtin-parameters.js';
import { redactCredentials } from './credential-text.js';
import type { ToolOutcome } from './daemon-call.js';

export interface PlanStep {
  step: string;
  status: (typeof PLAN_STATUSES)[number];
}

/** The answer to a plan that is too large once encoded: the plan kept before stays. */
export const PLAN_TOO_LARGE: ToolOutcome = {
  ok: false,
  code: 'plan_too_large',
  message: 'the plan takes too many bytes once encoded; send shorter steps',
};

/**
 * A plan as the daemon shows and keeps it: each step's text as sent, never cut (the schema already held it
 * to BUILTIN_LIMITS.plan_step_chars characters), with credential-looking parts replaced by `[redacted]`.
 * Null when the plan so shown, encoded as compact JSON, takes more than BUILTIN_LIMITS.plan_bytes: such a
 * plan is refused whole, so that its activity always fits a payload.
 */
export function shownPlan(steps: readonly PlanStep[]): PlanStep[] | null {
  const shown = steps.map(({ step, status }) => ({ step: redactCredentials(step).text, status }));
  return utf8ByteLength(JSON.stringify(shown)) <= BUILTIN_LIMITS.plan_bytes ? shown : null;
}
