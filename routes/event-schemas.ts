import { type TSchema, Type } from 'typebox';
import { PLAN_STATUSES } from '../core/agent/builtin-parameters.js';
import type { OAuthFailureCode } from '../core/auth/oauth-client.js';
import { PROFILE_LIMITS } from '../core/limits.js';
import { TerminalPayload } from './turn-schemas.js';

/**
 * The payload of every event the daemon sends (docs/protocol.md sections 8, 11 and 16). The daemon builds
 * these payloads in core/ as plain objects; these schemas say what they are, for `magid schema` and for the
 * tests that check every event sent against them.
 */

const CallHash = Type.String({ pattern: '^[0-9a-f]{16}$' });
const Generation = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

const ReasoningActivity = Type.Object({ kind: Type.Literal('reasoning') }, { additionalProperties: false });

const SummaryActivity = Type.Object(
  {
    kind: Type.Literal('reasoning_summary'),
    text: Type.String(),
    truncated: Type.Boolean(),
    redacted: Type.Boolean(),
  },
  { additionalProperties: false },
);

const ToolCallRequestedActivity = Type.Object(
  { kind: Type.Literal('tool_call_requested') },
  { additionalProperties: false },
);

/** An application or built-in call's progress; a subagent's calls name their `spawn_agent` call's hash. */
const ToolCallActivity = Type.Object(
  {
    kind: Type.Literal('tool_call'),
    call: CallHash,
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('waiting_for_executor'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
    ]),
    parent: Type.Optional(CallHash),
  },
  { additionalProperties: false },
);

const PlanActivity = Type.Object(
  {
    kind: Type.Literal('plan'),
    steps: Type.Array(
      Type.Object(
        { step: Type.String(), status: Type.Union(PLAN_STATUSES.map((status) => Type.Literal(status))) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const TurnStarted = Type.Object({ turn_id: Type.String() }, { additionalProperties: false });

const AssistantDelta = Type.Object(
  { turn_id: Type.String(), delta: Type.String() },
  { additionalProperties: false },
);

const TurnActivity = Type.Object(
  {
    turn_id: Type.String(),
    activity: Type.Union([
      ReasoningActivity,
      SummaryActivity,
      ToolCallRequestedActivity,
      ToolCallActivity,
      PlanActivity,
    ]),
  },
  { additionalProperties: false },
);

const ToolCall = Type.Object(
  {
    turn_id: Type.String(),
    call_id: Type.String(),
    provider_call_id: Type.String(),
    name: Type.String(),
    resource_id: Type.String(),
    revision_id: Type.String(),
    revision_sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
    executor_id: Type.String(),
    executor_generation: Generation,
    arguments: Type.Object({}, { additionalProperties: true }),
    timeout_ms: Type.Integer({ minimum: 1, maximum: PROFILE_LIMITS.tool_timeout_ms_max }),
  },
  { additionalProperties: false },
);

const ToolCancel = Type.Object(
  {
    turn_id: Type.String(),
    call_id: Type.String(),
    reason: Type.Union([Type.Literal('cancelled'), Type.Literal('tool_timeout')]),
  },
  { additionalProperties: false },
);

const ControlRevoked = Type.Object(
  { session_id: Type.String(), grant_generation: Generation, reason: Type.Literal('takeover') },
  { additionalProperties: false },
);

const LOGIN_FAILURE_CODES = [
  'server_unreachable',
  'discovery_failed',
  'state_mismatch',
  'authorization_denied',
  'invalid_callback',
  'exchange_failed',
  'refresh_failed',
  'storage_failed',
] as const satisfies readonly OAuthFailureCode[];
// Every failure code the login can end with is listed above (a new one fails to compile here).
type Unlisted = Exclude<OAuthFailureCode, (typeof LOGIN_FAILURE_CODES)[number]>;
const everyFailureCodeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFailureCodeListed;

const LoginId = { login_id: Type.String() };
const LoginProgress = Type.Union([
  Type.Object(
    {
      ...LoginId,
      state: Type.Literal('authorization_url'),
      authorization_url: Type.String(),
      expires_in_ms: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
  ...(['waiting', 'exchanging', 'completed', 'cancelled', 'expired'] as const).map((state) =>
    Type.Object({ ...LoginId, state: Type.Literal(state) }, { additionalProperties: false }),
  ),
  Type.Object(
    {
      ...LoginId,
      state: Type.Literal('failed'),
      code: Type.Union(LOGIN_FAILURE_CODES.map((code) => Type.Literal(code))),
    },
    { additionalProperties: false },
  ),
]);

/** Which members of an event's frame are set (else null) besides its payload. */
export interface EventEnvelope {
  session_id: boolean;
  operation_id: boolean;
  grant_generation: boolean;
  sequence: boolean;
}

export interface EventDeclaration {
  payload: TSchema;
  envelope: EventEnvelope;
  /** Sent only on connections that selected `application_resources_v1`. */
  profile: boolean;
}

/** A turn's own events: to the session's controller, numbered in the turn's sequence. */
const TURN_EVENT = { session_id: true, operation_id: true, grant_generation: true, sequence: true };
/** An application call's events: to the executor's attached connection, outside any sequence. */
const CALLBACK_EVENT = { session_id: true, operation_id: false, grant_generation: false, sequence: false };

/** Every event the daemon sends, by name: its payload, its frame's members and who may receive it. */
export const EVENTS: Readonly<Record<string, EventDeclaration>> = {
  'turn.started': { payload: TurnStarted, envelope: TURN_EVENT, profile: false },
  'turn.assistant_delta': { payload: AssistantDelta, envelope: TURN_EVENT, profile: false },
  'turn.activity': { payload: TurnActivity, envelope: TURN_EVENT, profile: false },
  'turn.terminal': { payload: TerminalPayload, envelope: TURN_EVENT, profile: false },
  'turn.application_tool_call': { payload: ToolCall, envelope: CALLBACK_EVENT, profile: true },
  'turn.application_tool_cancel': { payload: ToolCancel, envelope: CALLBACK_EVENT, profile: true },
  'session.control_revoked': {
    payload: ControlRevoked,
    envelope: { session_id: true, operation_id: false, grant_generation: true, sequence: false },
    profile: false,
  },
  'auth.login_progress': {
    payload: LoginProgress,
    envelope: { session_id: false, operation_id: true, grant_generation: false, sequence: false },
    profile: false,
  },
};
