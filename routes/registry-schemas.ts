import { Type } from 'typebox';
import { PROFILE_LIMITS } from '../core/limits.js';
import { RESOURCE_NAME_PATTERN } from '../core/resources/names.js';
import { WireId } from './schemas.js';
import type { WireRouteOptions } from './wire-route.js';

/** The envelope of the registry mutations: the session, its current control token, a fresh operation id. */
export const REGISTRY_MUTATION = {
  session: 'required',
  control: 'required',
  operation: 'required',
  profile: true,
} as const satisfies WireRouteOptions;

/** `session.resources.list` is a read: the same authority, a null operation id. */
export const REGISTRY_READ = { ...REGISTRY_MUTATION, operation: 'null' } as const satisfies WireRouteOptions;

/*
 * The payload schemas refuse the wrong shape early with `invalid_payload`. Their string bounds are
 * necessary conditions only (a text of at most N UTF-8 bytes has at most N characters however they are
 * counted); the registry parses the payload again and applies the exact byte, text and path rules.
 */
const ResourceKind = Type.Union([Type.Literal('tool'), Type.Literal('skill')]);

const InlineSource = Type.Object(
  {
    kind: Type.Literal('inline'),
    content: Type.String({ maxLength: PROFILE_LIMITS.tool_source_bytes }),
  },
  { additionalProperties: false },
);

const WorkspaceFileSource = Type.Object(
  {
    kind: Type.Literal('workspace_file'),
    path: Type.String({ minLength: 1, maxLength: PROFILE_LIMITS.source_path_bytes }),
  },
  { additionalProperties: false },
);

export const ResourcePayload = Type.Object(
  {
    kind: ResourceKind,
    name: Type.String({ pattern: RESOURCE_NAME_PATTERN, maxLength: PROFILE_LIMITS.name_bytes }),
    description: Type.String({ maxLength: PROFILE_LIMITS.description_bytes }),
    source: Type.Union([InlineSource, WorkspaceFileSource]),
  },
  { additionalProperties: false },
);

export const RegisterPayload = Type.Object(
  { expected_revision: Type.Union([WireId, Type.Null()]), resource: ResourcePayload },
  { additionalProperties: false },
);

export const UnregisterPayload = Type.Object(
  { resource_id: WireId, expected_revision: WireId },
  { additionalProperties: false },
);

export const ClearPayload = Type.Object(
  { expected_registry_revision: WireId },
  { additionalProperties: false },
);

/** Which connection action registered a revision. */
const RegisteredBy = Type.Object({
  instance_id: Type.String(),
  connection_id: Type.String(),
  operation_id: Type.String(),
  grant_generation: Type.Integer(),
});

/** A resource revision as clients see it: never a body, a path or a secret. */
export const Descriptor = Type.Object({
  resource_id: Type.String(),
  revision_id: Type.String(),
  kind: ResourceKind,
  name: Type.String(),
  description: Type.String(),
  content_sha256: Type.String(),
  revision_sha256: Type.String(),
  captured_bytes: Type.Integer(),
  registered_by: RegisteredBy,
});

export const ListResult = Type.Object({
  registry_revision: Type.String(),
  entries: Type.Array(Descriptor, {
    maxItems: PROFILE_LIMITS.tools_per_session + PROFILE_LIMITS.skills_per_session,
  }),
});

export const RegisterResult = Type.Object({ entry: Descriptor, registry_revision: Type.String() });

export const UnregisterResult = Type.Object({
  resource_id: Type.String(),
  removed_revision: Type.String(),
  registry_revision: Type.String(),
});

export const ClearResult = Type.Object({ registry_revision: Type.String(), removed_count: Type.Integer() });
