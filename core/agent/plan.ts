import { cutUtf8 } from '../resources/unicode.js';
import { redactCredentials } from '../turns/credential-text.js';
import { BUILTIN_LIMITS } from './builtin-limits.js';
import type { PLAN_STATUSES } from './builtin-parameters.js';

export interface PlanStep {
  step: string;
  status: (typeof PLAN_STATUSES)[number];
}

/**
 * A plan as the daemon shows and keeps it: each step's credential-looking text removed and cut between
 * characters to BUILTIN_LIMITS.plan_step_bytes. The arguments were already checked against the schema.
 */
export function shownPlan(steps: readonly PlanStep[]): PlanStep[] {
  return steps.map(({ step, status }) => ({
    step: cutUtf8(redactCredentials(step).text, BUILTIN_LIMITS.plan_step_bytes),
    status,
  }));
}
