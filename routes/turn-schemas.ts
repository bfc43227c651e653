import { Type } from 'typebox';
import { PROFILE_LIMITS } from '../core/limits.js';
import type { WireRouteOptions } from '../plugins/wire-route.js';
import { WireId } from './schemas.js';

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
