import type { Clock } from '../clock.js';
import { utf8ByteLength } from '../resources/unicode.js';
import type { ApplicationCall } from './application-call.js';
import type { ApplicationManifest } from './application-manifest.js';

/** One call as reconnect evidence shows it: identities and state, never arguments or results. */
export interface CallEvidence {
  call_id: string;
  provider_call_id: string;
  name: string;
  executor_id: string;
  executor_generation: number;
  resource_id: string;
  revision_id: string;
  revision_sha256: string;
  status: ApplicationCall['status'];
  external_effects: ApplicationCall['effects'];
  wait_kind: 'availability' | 'execution' | null;
  remaining_ms: number | null;
}

export interface TurnEvidence {
  turn_id: string;
  application_manifest: ApplicationManifest | null;
  calls: CallEvidence[];
}

/** The call's evidence now. Reading it renews no deadline. */
export function callEvidence(call: ApplicationCall, clock: Clock): CallEvidence {
  const { identity } = call;
  return {
    call_id: identity.callId,
    provider_call_id: identity.providerCallId,
    name: identity.tool.name,
    executor_id: identity.executor.executor_id,
    executor_generation: identity.executor.executor_generation,
    resource_id: identity.tool.resource_id,
    revision_id: identity.tool.revision_id,
    revision_sha256: identity.tool.revision_sha256,
    status: call.status,
    external_effects: call.effects,
    wait_kind: call.open ? (call.waitKind ?? 'availability') : null,
    remaining_ms: call.remainingMs(clock),
  };
}

/** The longest each state member can be, so a call's evidence is reserved at its largest. */
const WORST_STATE = {
  status: 'waiting_for_executor',
  external_effects: 'not_dispatched',
  wait_kind: 'availability',
  remaining_ms: Number.MAX_SAFE_INTEGER,
} as const;

/** Encoded bytes a call's evidence can ever take, with a separating comma. */
export function worstCaseCallBytes(call: ApplicationCall, clock: Clock): number {
  return utf8ByteLength(JSON.stringify({ ...callEvidence(call, clock), ...WORST_STATE })) + 1;
}

/** Encoded bytes of the evidence without calls: the turn's identity and its manifest. */
export function evidenceBaseBytes(turnId: string, manifest: ApplicationManifest | null): number {
  return utf8ByteLength(JSON.stringify({ turn_id: turnId, application_manifest: manifest, calls: [] }));
}
