import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AuthReadiness } from './auth-schemas.js';
import { EmptyPayload } from './schemas.js';

const Result = Type.Object({ removed: Type.Boolean(), ...AuthReadiness.properties });

/** `auth.logout`: removes the stored key from the home; the environment's key is not the daemon's to remove. */
const authLogout: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.logout',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      await fastify.enterConfiguration(request);
      return fastify.credentials.logout();
    },
  );
};

export default authLogout;
