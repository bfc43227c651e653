import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuthReadiness } from './auth-schemas.js';
import { EmptyPayload } from './schemas.js';

/** `auth.status`: whether the provider has a key and where it comes from; from memory, no network. */
const authStatus: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.status',
    {
      schema: { body: EmptyPayload, response: { 200: AuthReadiness } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async () => fastify.credentials.readiness(),
  );
};

export default authStatus;
