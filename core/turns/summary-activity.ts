import { redactCredentials } from '../agent/credential-text.js';
import { TURN_LIMITS } from '../limits.js';
import type { ReasoningSummary } from '../provider/reasoning-summaries.js';
import { cutUtf8 } from '../resources/unicode.js';

/**
 * The `reasoning_summary` activity of a provider's summary: credential-looking text removed, then cut
 * between characters to TURN_LIMITS.reasoning_summary_bytes. `redacted` when the provider withheld
 * reasoning or text was removed here; `truncated` when the provider's summary or the cut lost text.
 */
export function summaryActivity(summary: ReasoningSummary): Record<string, unknown> {
  const cleaned = redactCredentials(summary.text);
  const text = cutUtf8(cleaned.text, TURN_LIMITS.reasoning_summary_bytes);
  return {
    kind: 'reasoning_summary',
    text,
    truncated: summary.truncated || text !== cleaned.text,
    redacted: summary.redacted || cleaned.removed,
  };
}
