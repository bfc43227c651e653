/**
 * Payloads and results of the six executor methods, shaped exactly as they travel on the wire
 * (application-resources.md, "Executor authority and execution").
 */
export const EXECUTOR_METHODS = [
  'executor.create',
  'executor.confirm',
  'executor.resume',
  'executor.rotate',
  'executor.rotate_confirm',
  'executor.release',
] as const;

export type ExecutorMethod = (typeof EXECUTOR_METHODS)[number];

export function isExecutorMethod(method: unknown): method is ExecutorMethod {
  return (EXECUTOR_METHODS as readonly unknown[]).includes(method);
}

/** `executor.confirm` and `executor.resume`. */
export interface ExecutorProofPayload {
  executor_id: string;
  resume_secret: string;
}

/** `executor.rotate` and `executor.release`. */
export interface ExecutorGenerationPayload {
  executor_id: string;
  executor_generation: number;
}

/** `executor.rotate_confirm`. */
export interface ExecutorRotateConfirmPayload extends ExecutorGenerationPayload {
  resume_secret: string;
}

export interface ExecutorIdentity {
  executor_id: string;
  executor_generation: number;
}

/**
 * A callback still waiting on this executor, as a confirm/resume response reports it. It names the call
 * and its accepted binding so the application can submit a retained result; it never carries arguments.
 */
export interface PendingCall {
  /** The call's session: `turn.application_tool_result` names it in its envelope. */
  session_id: string;
  turn_id: string;
  call_id: string;
  provider_call_id: string;
  name: string;
  resource_id: string;
  revision_id: string;
  revision_sha256: string;
  status: 'waiting_for_executor' | 'pending';
  wait_kind: 'availability' | 'execution';
  remaining_ms: number;
}

export interface ExecutorCreateResult extends ExecutorIdentity {
  executor_generation: 1;
  resume_secret: string;
}

/** `executor.confirm` and `executor.resume`. */
export interface ExecutorAttachResult extends ExecutorIdentity {
  pending_calls: PendingCall[];
}

export interface ExecutorRotateResult extends ExecutorIdentity {
  resume_secret: string;
  status: 'rotation_pending';
  pending_timeout_ms: number;
}

export type ExecutorRotateConfirmResult = ExecutorIdentity;

export interface ExecutorReleaseResult extends ExecutorIdentity {
  status: 'released';
}

export type ExecutorMethodResult =
  | ExecutorCreateResult
  | ExecutorAttachResult
  | ExecutorRotateResult
  | ExecutorRotateConfirmResult
  | ExecutorReleaseResult;
