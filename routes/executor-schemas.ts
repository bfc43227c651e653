import { Type } from 'typebox';
import { projectExecutorResultForLookup } from '../core/executors/lookup-projection.js';
import { PROFILE_LIMITS, SERVICE_LIMITS } from '../core/limits.js';
import type { WireRouteOptions } from './wire-route.js';

/** The envelope of every executor method: no session, no control, a fresh operation id, profile only. */
export const EXECUTOR_METHOD = {
  session: 'null',
  control: 'null',
  operation: 'required',
  profile: true,
  retain: projectExecutorResultForLookup,
} as const satisfies WireRouteOptions;

/**
 * A presented resume secret. Issued secrets are 43 characters (32 bytes, base64url); anything up to
 * the wire's token length reaches the constant-time comparison and is refused there exactly like a
 * wrong secret of the right length.
 */
export const ResumeSecret = Type.String({ minLength: 1, maxLength: SERVICE_LIMITS.resume_secret_chars });
export const ExecutorGeneration = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

/** One entry of `pending_calls`, member for member the registry's PendingCall. */
export const PendingCallResult = Type.Object({
  session_id: Type.String(),
  turn_id: Type.String(),
  call_id: Type.String(),
  provider_call_id: Type.String(),
  name: Type.String(),
  resource_id: Type.String(),
  revision_id: Type.String(),
  revision_sha256: Type.String(),
  status: Type.Union([Type.Literal('waiting_for_executor'), Type.Literal('pending')]),
  wait_kind: Type.Union([Type.Literal('availability'), Type.Literal('execution')]),
  remaining_ms: Type.Integer(),
});

/** The result of `executor.confirm` and `executor.resume`. */
export const ExecutorAttachResult = Type.Object({
  executor_id: Type.String(),
  executor_generation: Type.Integer(),
  pending_calls: Type.Array(PendingCallResult, { maxItems: PROFILE_LIMITS.calls }),
});
