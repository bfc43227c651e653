import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { projectKey } from '../core/configuration/model-settings.js';
import { SERVICE_LIMITS } from '../core/limits.js';
import { SettingsView, Workspace } from './configuration-schemas.js';

const Payload = Type.Object({ workspace: Workspace }, { additionalProperties: false });

/** `settings.get`: the global settings, a workspace's pin and what a turn there would run with. */
const settingsGet: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/settings.get',
    {
      schema: { body: Payload, response: { 200: SettingsView } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request) => {
      const { workspace } = request.body;
      const key = workspace === null ? null : projectKey(workspace, SERVICE_LIMITS.workspace_path_bytes);
      await fastify.enterConfiguration(request);
      return fastify.modelSettings.view(key);
    },
  );
};

export default settingsGet;
