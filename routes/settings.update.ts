import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { projectKey, type SettingsScope } from '../core/configuration/model-settings.js';
import { SERVICE_LIMITS } from '../core/limits.js';
import { Effort, ModelId, SettingsView, Workspace } from './configuration-schemas.js';

/** Only these three settings can be written: anything else in `changes` is `invalid_payload`. */
const Payload = Type.Object(
  {
    workspace: Workspace,
    changes: Type.Object(
      {
        model: Type.Optional(Type.Union([ModelId, Type.Null()])),
        reasoning_effort: Type.Optional(Type.Union([Effort, Type.Null()])),
        fast: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/**
 * `settings.update`: a scoped write of the model, reasoning effort and fast mode, globally or as a
 * workspace's pin. Unknown fields of the file and the other pins are kept; turns already running keep
 * the settings they were admitted with.
 */
const settingsUpdate: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/settings.update',
    {
      schema: { body: Payload, response: { 200: SettingsView } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      const { workspace, changes } = request.body;
      const scope: SettingsScope =
        workspace === null
          ? { kind: 'global' }
          : { kind: 'project', workspace: projectKey(workspace, SERVICE_LIMITS.workspace_path_bytes) };
      await fastify.enterConfiguration(request);
      // A model is checked under the id the catalog lists it by (`NAME/model` on a named provider).
      const { router } = fastify.provider;
      const catalog = {
        has: (model: string) => fastify.modelCatalog.has(router?.catalogId(model) ?? model),
      };
      return fastify.modelSettings.update(scope, changes, catalog);
    },
  );
};

export default settingsUpdate;
