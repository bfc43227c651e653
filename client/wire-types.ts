/**
 * The wire's payloads and results as the daemon validates them: each type is the static type of the
 * route's own TypeBox schema (type-only imports, so nothing of the daemon is loaded). Events have no
 * schema on the daemon side; their payloads are written out here as docs/protocol.md section 11 states.
 */
import type { Static } from 'typebox';
import type { ApplicationManifest } from '../core/turns/application-manifest.js';
import type { Result as ExecutorCreate } from '../routes/executor.create.js';
import type { Result as ExecutorRotate } from '../routes/executor.rotate.js';
import type { ExecutorAttachResult, PendingCallResult } from '../routes/executor-schemas.js';
import type { Result as Initialize } from '../routes/initialize.js';
import type { Result as OperationLookup } from '../routes/operation.lookup.js';
import type {
  ClearResult as ClearResultSchema,
  Descriptor as DescriptorSchema,
  ListResult as ListResultSchema,
  RegisterResult as RegisterResultSchema,
  ResourcePayload,
  UnregisterResult as UnregisterResultSchema,
} from '../routes/registry-schemas.js';
import type { Result as SessionClaim } from '../routes/session.claim.js';
import type { Result as SessionClose } from '../routes/session.close.js';
import type { Result as SessionCreate } from '../routes/session.create.js';
import type { Result as SessionReplay } from '../routes/session.replay.js';
import type {
  Result as ApplicationEvidence,
  CallEvidence as CallEvidenceSchema,
} from '../routes/turn.application_evidence.js';
import type { Result as ToolResultAck } from '../routes/turn.application_tool_result.js';
import type { Result as TurnStart } from '../routes/turn.start.js';
import type {
  ApplicationSelection as ApplicationSelectionSchema,
  CallStatus as CallStatusSchema,
  ExternalEffects as ExternalEffectsSchema,
  TerminalPayload as TerminalPayloadSchema,
  ToolResultPayload,
} from '../routes/turn-schemas.js';

export type InitializeResult = Static<typeof Initialize>;
export type SessionCreateResult = Static<typeof SessionCreate>;
/**
 * `T` with every `application_manifest` in it typed as the manifest: the schemas leave that object open
 * (the daemon forwards the manifest as accepted); docs/protocol.md section 11 states its members.
 */
type Manifested<T> = T extends object
  ? { [Key in keyof T]: Key extends 'application_manifest' ? ApplicationManifest | null : Manifested<T[Key]> }
  : T;

export type SessionClaimResult = Manifested<Static<typeof SessionClaim>>;
export type ClaimSnapshot = SessionClaimResult['snapshot'];
/** A claim snapshot's `turn`: the session's active turn. */
export type ActiveTurnSnapshot = NonNullable<ClaimSnapshot['turn']>;
export type SessionCloseResult = Static<typeof SessionClose>;
export type ReplayResult = Static<typeof SessionReplay>;
export type { ApplicationManifest };
export type Resource = Static<typeof ResourcePayload>;
export type ResourceSource = Resource['source'];
export type Descriptor = Static<typeof DescriptorSchema>;
export type ListResult = Static<typeof ListResultSchema>;
export type RegisterResult = Static<typeof RegisterResultSchema>;
export type UnregisterResult = Static<typeof UnregisterResultSchema>;
export type ClearResult = Static<typeof ClearResultSchema>;
export type ExecutorCreateResult = Static<typeof ExecutorCreate>;
export type ExecutorAttach = Static<typeof ExecutorAttachResult>;
export type ExecutorRotateResult = Static<typeof ExecutorRotate>;
export type PendingCall = Static<typeof PendingCallResult>;
export type ApplicationSelection = Static<typeof ApplicationSelectionSchema>;
export type TurnStartResult = Manifested<Static<typeof TurnStart>>;
export type ToolResult = Static<typeof ToolResultPayload>;
export type ToolOutcome = ToolResult['outcome'];
export type ToolResultAcknowledgment = Static<typeof ToolResultAck>;
export type EvidenceResult = Manifested<Static<typeof ApplicationEvidence>>;
export type CallEvidence = Static<typeof CallEvidenceSchema>;
/** An application call's state: `waiting_for_executor`, `pending`, `succeeded`, `failed` or `cancelled`. */
export type CallStatus = Static<typeof CallStatusSchema>;
/** `not_dispatched`, `uncertain` or `reported`. */
export type ExternalEffects = Static<typeof ExternalEffectsSchema>;
export type OperationLookupResult = Static<typeof OperationLookup>;

/** `turn.activity`'s `activity`. */
export type Activity =
  | { kind: 'reasoning' }
  | { kind: 'reasoning_summary'; text: string; truncated: boolean; redacted: boolean }
  | { kind: 'tool_call_requested' }
  | {
      kind: 'tool_call';
      call: string;
      status: Extract<CallStatus, 'pending' | 'waiting_for_executor' | 'succeeded' | 'failed'>;
      /** A subagent's call: the hash of its `spawn_agent` call. */
      parent?: string;
    }
  | { kind: 'plan'; steps: Array<{ step: string; status: 'pending' | 'in_progress' | 'completed' }> };

/** `turn.terminal`'s payload (a claim snapshot's `terminal` too). */
export type TerminalPayload = Manifested<Static<typeof TerminalPayloadSchema>>;
export type TurnStatus = TerminalPayload['status'];
/** A failed turn's `error.code`. */
export type TurnFailureCode = NonNullable<TerminalPayload['error']>['code'];

interface TurnFrame<Name extends string, Payload> {
  event: Name;
  session_id: string;
  operation_id: string;
  grant_generation: number;
  sequence: number;
  payload: Payload;
}

/** The four events of a turn, as its controller receives them. */
export type TurnEvent =
  | TurnFrame<'turn.started', { turn_id: string }>
  | TurnFrame<'turn.assistant_delta', { turn_id: string; delta: string }>
  | TurnFrame<'turn.activity', { turn_id: string; activity: Activity }>
  | TurnFrame<'turn.terminal', TerminalPayload>;

/** `turn.application_tool_call`'s payload: one dispatch of an application call. */
export interface ToolCallPayload {
  turn_id: string;
  call_id: string;
  provider_call_id: string;
  executor_id: string;
  executor_generation: number;
  resource_id: string;
  revision_id: string;
  revision_sha256: string;
  name: string;
  arguments: Record<string, unknown>;
  timeout_ms: number;
}

/** `turn.application_tool_cancel`'s payload. */
export interface ToolCancelPayload {
  turn_id: string;
  call_id: string;
  reason: 'cancelled' | 'tool_timeout';
}
