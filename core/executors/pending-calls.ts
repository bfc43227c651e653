import { PROFILE_LIMITS } from '../limits.js';
import type { PendingCall } from './executor-types.js';

/** Supplies the calls still waiting on an executor; the turn coordinator owns them. */
export type PendingCallSource = (executorId: string) => readonly PendingCall[];

export const noPendingCalls: PendingCallSource = () => [];

/**
 * The `pending_calls` member of a confirm/resume response: at most PROFILE_LIMITS.calls entries, each
 * rebuilt from the allowed members only, so arguments or other call state handed over by the source
 * can never reach the response.
 */
export function boundPendingCalls(calls: readonly PendingCall[]): PendingCall[] {
  return calls.slice(0, PROFILE_LIMITS.calls).map((call) => ({
    session_id: call.session_id,
    turn_id: call.turn_id,
    call_id: call.call_id,
    provider_call_id: call.provider_call_id,
    name: call.name,
    resource_id: call.resource_id,
    revision_id: call.revision_id,
    revision_sha256: call.revision_sha256,
    status: call.status,
    wait_kind: call.wait_kind,
    remaining_ms: call.remaining_ms,
  }));
}
