import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AuthReadiness, ProviderName } from './auth-schemas.js';

const Payload = Type.Object({ provider: Type.Optional(ProviderName) }, { additionalProperties: false });

const Result = Type.Object({ removed: Type.Boolean(), ...AuthReadiness.properties });

/**
 * `auth.logout`: removes the stored key of the default provider, or of the one `provider` names, from the
 * home; a key of the environment is not the daemon's to remove.
 */
const authLogout: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.logout',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      const store = fastify.providerCredentials.of(request.body.provider);
      await fastify.enterConfiguration(request);
      return store.logout();
    },
  );
};

export default authLogout;
