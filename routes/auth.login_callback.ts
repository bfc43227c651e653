import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { oauthRefusals } from '../core/auth/oauth-login.js';
import { WireError } from '../core/errors.js';
import { AuthReadiness, LoginEnded } from './auth-schemas.js';

/** Bytes of a pasted callback URL. */
export const CALLBACK_URL_BYTES = 8192;

const Payload = Type.Object(
  { url: Type.String({ minLength: 1, maxLength: CALLBACK_URL_BYTES }) },
  { additionalProperties: false },
);

const Result = Type.Object({ ...LoginEnded.properties, auth: AuthReadiness });

/**
 * `auth.login_callback`: the URL the browser was sent back to, pasted by the user when the browser runs on
 * another machine and cannot reach the loopback listener. It is handed to the login waiting for one, and
 * the answer is that login's end. The URL is never echoed, logged, stored or retained; a wrong `state`
 * fails the login with `state_mismatch`, saying nothing more.
 */
const authLoginCallback: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/auth.login_callback',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'required' } },
    },
    async (request) => {
      if (fastify.oauthLogins === null) throw oauthRefusals.notConfigured();
      let url: URL;
      try {
        url = new URL(request.body.url);
      } catch {
        throw new WireError('invalid_payload', 'the callback is not a URL');
      }
      const running = fastify.oauthLogins.callback(url);
      const outcome = await running.flow.finished;
      return {
        login_id: running.loginId,
        state: outcome.state,
        code: outcome.state === 'failed' ? outcome.code : null,
        auth: fastify.credentials.readiness(),
      };
    },
  );
};

export default authLoginCallback;
