import { type TLiteral, type TUnion, Type } from 'typebox';
import { PROFILE_LIMITS } from '../core/limits.js';
import { TURN_FAILURE_CODES, TURN_STATUSES } from '../core/turns/turn-failure.js';
import { WireId } from './schemas.js';
import type { WireRouteOptions } from './wire-route.js';

/** Turn methods: the session's id and current control token, and a fresh operation id. */
export const TURN_MUTATION = {
  session: 'required',
  control: 'required',
  operation: 'required',
} as const satisfies WireRouteOptions;

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Generation = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const ToolAuthorization = Type.Object(
  { resource_id: WireId, revision_id: WireId, revision_sha256: Sha256 },
  { additionalProperties: false },
);

export const ApplicationSelection = Type.Object(
  {
    expected_registry_revision: WireId,
    executor_id: Type.Union([WireId, Type.Null()]),
    executor_generation: Type.Union([Generation, Type.Null()]),
    tool_authorizations: Type.Array(ToolAuthorization, { maxItems: PROFILE_LIMITS.tools_per_session }),
  },
  { additionalProperties: false },
);

export const ToolResultPayload = Type.Object(
  {
    turn_id: WireId,
    call_id: WireId,
    executor_id: WireId,
    executor_generation: Generation,
    resource_id: WireId,
    revision_id: WireId,
    revision_sha256: Sha256,
    outcome: Type.Union([
      Type.Object(
        { status: Type.Literal('success'), value: Type.Object({}, { additionalProperties: true }) },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          status: Type.Literal('error'),
          code: Type.Union([Type.Literal('execution_failed'), Type.Literal('permission_denied')]),
          message: Type.String(),
        },
        { additionalProperties: false },
      ),
    ]),
  },
  { additionalProperties: false },
);

/** An application call's state, as evidence and terminal records report it (docs/protocol.md section 11). */
export const CallStatus = Type.Union([
  Type.Literal('waiting_for_executor'),
  Type.Literal('pending'),
  Type.Literal('succeeded'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
]);

/** Whether an application call may have acted outside the daemon. */
export const ExternalEffects = Type.Union([
  Type.Literal('not_dispatched'),
  Type.Literal('uncertain'),
  Type.Literal('reported'),
]);

/** The manifest member a profile receiver gets on a turn's payloads: the manifest, or null. */
const ManifestMember = Type.Optional(
  Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
);

/** The union of `values` as literals, typed member by member (`map` alone would lose the tuple). */
function literals<const Values extends readonly string[]>(
  values: Values,
): TUnion<{ -readonly [Index in keyof Values]: TLiteral<Values[Index]> }> {
  return Type.Union(values.map((value) => Type.Literal(value))) as never;
}

export const TurnError = Type.Object({
  code: literals(TURN_FAILURE_CODES),
  message: Type.String(),
});

/** `turn.terminal`'s payload; a claim snapshot's `terminal` is the same. */
export const TerminalPayload = Type.Object({
  turn_id: Type.String(),
  status: literals(TURN_STATUSES),
  error: Type.Union([TurnError, Type.Null()]),
  assistant_text: Type.String(),
  activity_dropped: Type.Integer(),
  application_manifest: ManifestMember,
});

/** A claim snapshot's active turn: the last sequence number it used and the text accepted so far. */
export const ActiveTurn = Type.Object({
  turn_id: Type.String(),
  status: Type.Literal('running'),
  sequence: Type.Integer(),
  assistant_text: Type.String(),
  application_manifest: ManifestMember,
});

/** What a claim sees of its session's turns: the active one, or else the last terminal of 600 s. */
export const Snapshot = Type.Object({
  turn: Type.Union([ActiveTurn, Type.Null()]),
  terminal: Type.Union([TerminalPayload, Type.Null()]),
});
