import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RunningLogin } from '../core/auth/oauth-login.js';
import { oauthRefusals } from '../core/auth/oauth-login.js';
import { CONFIGURATION_LIMITS } from '../core/limits.js';
import { AuthReadiness, LoginStarted, ProviderName } from './auth-schemas.js';

/** Visible ASCII only: the key goes into an HTTP header. */
const ApiKey = Type.String({ pattern: `^[\\x21-\\x7e]{1,${CONFIGURATION_LIMITS.api_key_bytes}}$` });

const Payload = Type.Union([
  Type.Object(
    { method: Type.Literal('api_key'), api_key: ApiKey, provider: Type.Optional(ProviderName) },
    { additionalProperties: false },
  ),
  Type.Object(
    { method: Type.Literal('oauth'), provider: Type.Optional(ProviderName) },
    { additionalProperties: false },
  ),
]);

/** OAuth logins whose progress events start once their acceptance has been written. */
const accepted = new WeakMap<FastifyRequest, RunningLogin>();

/**
 * `auth.login`: with `api_key`, stores the key in the home for the default provider, or the one `provider`
 * names, to use when the environment sets none, and answers once it is stored. With `oauth`, starts the browser sign-in of `provider.oauth` and
 * answers at once with its acceptance; its progress follows as `auth.login_progress` events to this
 * connection, and its outcome settles the operation. One login at a time, whichever kind; the key, the
 * authorization URL and the tokens are never echoed, logged or retained.
 */
const authLogin: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.login',
    {
      schema: { body: Payload, response: { 200: Type.Union([AuthReadiness, LoginStarted]) } },
      config: { wire: { session: 'null', control: 'null', operation: 'required', settlesLater: true } },
      onResponse: (request, _reply, done) => {
        accepted.get(request)?.progress.open();
        done();
      },
    },
    async (request) => {
      const { body } = request;
      const operationId = request.wire.envelope.operation_id!;
      const store = fastify.providerCredentials.of(body.provider);
      // OAuth signs in the `provider` section's provider only: named providers take keys.
      if (body.method === 'oauth' && (fastify.oauthLogins === null || store !== fastify.credentials)) {
        throw oauthRefusals.notConfigured();
      }
      // One login at a time, whichever provider it is for.
      const end = fastify.credentials.beginLogin();
      const { connection } = request.wire;
      // From its admission on, an OAuth login can be cancelled, and its connection's end cancels it.
      const reservation = body.method === 'oauth' ? fastify.oauthLogins!.reserve(connection.id) : null;
      if (reservation !== null)
        connection.onClose(() => fastify.oauthLogins!.connectionClosed(connection.id));
      let handedOver = false;
      fastify.afterAnswer(request, () => {
        if (handedOver) return;
        if (reservation !== null) fastify.oauthLogins!.release(reservation);
        end();
      });
      await fastify.enterConfiguration(request);
      if (body.method === 'api_key') {
        const result = await store.login(body.api_key);
        fastify.operations.settle(operationId, { ok: true, result });
        return result;
      }
      const running = fastify.startOAuthLogin(connection, reservation!, operationId, end);
      handedOver = true;
      accepted.set(request, running);
      const acceptance = { login_id: running.loginId, state: 'started' as const };
      fastify.operations.accept(operationId, acceptance);
      return acceptance;
    },
  );
};

export default authLogin;
