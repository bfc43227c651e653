import { Type } from 'typebox';
import { WIRE_ID_PATTERN } from '../core/ids.js';
import { SERVICE_LIMITS } from '../core/limits.js';

/** Schema pieces shared by the wire methods' payloads and results. */
export const WireId = Type.String({ pattern: WIRE_ID_PATTERN });

export const EmptyPayload = Type.Object({}, { additionalProperties: false });

export const PagePayload = Type.Object(
  {
    cursor: Type.Union([WireId, Type.Null()]),
    limit: Type.Integer({ minimum: 1, maximum: SERVICE_LIMITS.page_limit_max }),
  },
  { additionalProperties: false },
);

export const ErrorObject = Type.Object({ code: Type.String(), message: Type.String() });
