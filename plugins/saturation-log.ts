import type { FastifyBaseLogger } from 'fastify';
import type { SaturationListener } from '../core/saturation.js';

/** What the log says when each bound saturates and when it clears. */
const MESSAGES: Record<string, { saturated: string; cleared: string }> = {
  operations: {
    saturated:
      'the operation table is full: mutations are refused, recovery methods sent by right use their slots',
    cleared: 'the operation table has room again',
  },
  recovery_slot: {
    saturated: 'a recovery slot is full: the recovery methods of its session or executor are refused',
    cleared: 'no recovery slot is full any more',
  },
  refusals: {
    saturated: 'the store of refusals is full: the oldest are forgotten before 600 s',
    cleared: 'the store of refusals has room again',
  },
  operation_share: {
    saturated: 'a connection holds its share of the operation table',
    cleared: 'no connection holds its share of the operation table any more',
  },
  evidence_turns: {
    saturated: 'the evidence of the most turns is retained: turn.start on profile connections is refused',
    cleared: 'the turn evidence has room again',
  },
};

/**
 * Logs each saturation and each clearing of a bound once: a warning, then an info line, naming the bound
 * and giving its counts under its name, as `status` shows them under `retention`.
 */
export function saturationLogger(log: FastifyBaseLogger): SaturationListener {
  return ({ bound, saturated, details }) => {
    const messages = MESSAGES[bound] ?? { saturated: `${bound} saturated`, cleared: `${bound} cleared` };
    if (saturated) log.warn({ bound, [bound]: details }, messages.saturated);
    else log.info({ bound, [bound]: details }, messages.cleared);
  };
}
