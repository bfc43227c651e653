import { Type } from 'typebox';
import { MODEL_ID_PATTERN } from '../config/settings-file.js';
import { SERVICE_LIMITS } from '../core/limits.js';
import { REASONING_EFFORTS } from '../core/provider/chat-provider.js';

/** Schema pieces of the `catalog.*` and `settings.*` methods. */
export const CatalogResult = Type.Object({
  models: Type.Array(
    Type.Object({
      id: Type.String(),
      owned_by: Type.Union([Type.String(), Type.Null()]),
      /** The named provider that listed the model; absent for the `provider` section's. */
      provider: Type.Optional(Type.String()),
    }),
  ),
  truncated: Type.Boolean(),
  refreshed_at: Type.Union([Type.Integer(), Type.Null()]),
  /** `catalog.refresh` only: the providers whose listing failed (null for the `provider` section's). */
  failed: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Null()]))),
});

export const ModelId = Type.String({ pattern: MODEL_ID_PATTERN });
export const Effort = Type.Enum([...REASONING_EFFORTS]);
const NullableEffort = Type.Union([Effort, Type.Null()]);
const NullableModel = Type.Union([Type.String(), Type.Null()]);

/** The project a settings method looks from or writes to, by workspace path; null for the global scope. */
export const Workspace = Type.Union([
  Type.String({ minLength: 1, maxLength: SERVICE_LIMITS.workspace_path_bytes }),
  Type.Null(),
]);

export const SettingsView = Type.Object({
  global: Type.Object({
    model: NullableModel,
    reasoning_effort: NullableEffort,
    fast: Type.Union([Type.Boolean(), Type.Null()]),
  }),
  project: Type.Union([Type.Object({ model: NullableModel, reasoning_effort: NullableEffort }), Type.Null()]),
  effective: Type.Object({ model: NullableModel, reasoning_effort: NullableEffort, fast: Type.Boolean() }),
});
