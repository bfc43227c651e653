import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuthStatus } from './auth-schemas.js';
import { EmptyPayload } from './schemas.js';

/**
 * `auth.status`: whether the default provider has a key and where it comes from, and each named
 * provider's likewise; from memory, no network.
 */
const authStatus: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.status',
    {
      schema: { body: EmptyPayload, response: { 200: AuthStatus } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async () => {
      const credentials = fastify.providerCredentials;
      return {
        ...credentials.of(undefined).readiness(),
        ...(credentials.hasNamed ? { providers: credentials.readiness() } : {}),
      };
    },
  );
};

export default authStatus;
