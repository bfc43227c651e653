import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { CONFIGURATION_LIMITS } from '../core/limits.js';
import { AuthReadiness } from './auth-schemas.js';

/** Visible ASCII only: the key goes into an HTTP header. */
const ApiKey = Type.String({ pattern: `^[\\x21-\\x7e]{1,${CONFIGURATION_LIMITS.api_key_bytes}}$` });

const Payload = Type.Object(
  { method: Type.Literal('api_key'), api_key: ApiKey },
  { additionalProperties: false },
);

/**
 * `auth.login`: stores an API key in the home for the provider to use when the environment sets none.
 * One login at a time; the key is never echoed, logged or retained.
 */
const authLogin: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.login',
    {
      schema: { body: Payload, response: { 200: AuthReadiness } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      fastify.afterAnswer(request, fastify.credentials.beginLogin());
      await fastify.enterConfiguration(request);
      return fastify.credentials.login(request.body.api_key);
    },
  );
};

export default authLogin;
