import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import {
  readStoredCredential,
  removeStoredApiKey,
  writeStoredApiKey,
  writeStoredTokens,
} from '../config/credentials-file.js';
import { ProviderKeysFile, readProviderKeys } from '../config/provider-keys-file.js';
import { CredentialStore } from '../core/auth/credential-store.js';
import type { LoginProgressEvent } from '../core/auth/login-progress.js';
import { LoopbackCallback } from '../core/auth/loopback-callback.js';
import { OAuthClient } from '../core/auth/oauth-client.js';
import type { OAuthConfig } from '../core/auth/oauth-config.js';
import { type LoginReservation, OAuthLogins, type RunningLogin } from '../core/auth/oauth-login.js';
import { ProviderCredentials } from '../core/auth/provider-credentials.js';
import { TokenRefresher } from '../core/auth/token-refresher.js';
import type { Clock } from '../core/clock.js';
import type { Connection } from '../core/connections/connection.js';
import type { ProvidersSection } from '../core/provider/provider-definition.js';
import { encodeEvent } from '../core/wire/frames.js';

export interface AuthPluginOptions {
  home: string;
  clock: Clock;
  /** The key of the environment (`MAGI_API_KEY`), or null. */
  environmentKey: string | null;
  /** `provider.oauth` of the config file, or null when no OAuth login is configured. */
  oauth: OAuthConfig | null;
  /** The named providers, whose keys come from the variables they name or from `auth.login`. */
  providers: ProvidersSection;
  /** The environment as the daemon started with it: each named provider's variable is read from it once. */
  environment: Readonly<Record<string, string | undefined>>;
}

export const LOGIN_PROGRESS_EVENT = 'auth.login_progress';

declare module 'fastify' {
  interface FastifyInstance {
    /** The `provider` section's credential (`--provider-base-url`): the one OAuth logins store. */
    credentials: CredentialStore;
    /** Every provider's credential, the named providers' included. */
    providerCredentials: ProviderCredentials;
    /** The OAuth logins; null when `provider.oauth` is not configured. */
    oauthLogins: OAuthLogins | null;
    /**
     * Starts the OAuth login reserved for `connection` (`oauthLogins.reserve`), settled as `operationId`;
     * `end` runs once it has ended.
     */
    startOAuthLogin(
      connection: Connection,
      reservation: LoginReservation,
      operationId: string,
      end: () => void,
    ): RunningLogin;
  }
}

/**
 * The provider's credentials: the environment's key, else the key or the OAuth tokens a login stored in the
 * home. An OAuth login's progress goes to the connection that asked for it, as `auth.login_progress` events
 * carrying its operation id; its outcome settles that operation. A disconnect of that connection, the start
 * of a drain (shutdown, or the end of stdio's input) cancel the login; the app waits for its end.
 */
const auth: FastifyPluginAsync<AuthPluginOptions> = async (
  fastify,
  { home, clock, environmentKey, oauth, providers, environment },
) => {
  const stored = await readStoredCredential(home);
  const storedKeys = await readProviderKeys(home);
  const keysFile = new ProviderKeysFile(home, storedKeys);
  const drain = new AbortController();
  const client = oauth === null ? null : new OAuthClient(oauth, clock);
  const refresher: TokenRefresher | undefined =
    client === null
      ? undefined
      : new TokenRefresher({
          clock,
          refresh: (refreshToken, signal) => client.refresh(refreshToken, signal),
          commit: (previous, next): Promise<boolean> => credentials.replaceTokens(previous, next),
          signal: drain.signal,
          // Its fixed code and the backoff only: nothing the server sent, and never a token.
          onFailure: (failure) => fastify.log.warn({ refresh: failure }, 'the OAuth token refresh failed'),
        });
  const credentials: CredentialStore = new CredentialStore({
    environmentKey,
    storedKey: stored?.kind === 'api_key' ? stored.apiKey : null,
    storedTokens: stored?.kind === 'oauth' ? stored.tokens : null,
    refresher,
    clock,
    persistence: {
      write: (apiKey) => writeStoredApiKey(home, apiKey),
      writeTokens: (tokens) => writeStoredTokens(home, tokens),
      remove: () => removeStoredApiKey(home),
    },
  });
  const logins =
    oauth === null || client === null
      ? null
      : new OAuthLogins({
          client,
          clock,
          timeoutMs: oauth.loginTimeoutMs,
          openListener: (onCallback) => LoopbackCallback.open(onCallback),
          // Ordered with the other configuration writes, as an `auth.login` with a key is.
          commit: async (tokens) => {
            const release = await fastify.configurationWorker.acquire();
            try {
              await credentials.storeTokens(tokens);
            } finally {
              release();
            }
          },
        });

  const named = new Map(
    providers.definitions.map((definition) => [
      definition.name,
      new CredentialStore({
        environmentKey: definition.apiKeyEnv === null ? null : environment[definition.apiKeyEnv] || null,
        storedKey: storedKeys[definition.name] ?? null,
        persistence: {
          write: (apiKey) => keysFile.write(definition.name, apiKey),
          // Named providers sign in with keys only: `auth.login` never stores tokens for them.
          writeTokens: () => Promise.reject(new Error('a named provider stores no OAuth tokens')),
          remove: () => keysFile.remove(definition.name),
        },
      }),
    ]),
  );
  fastify.decorate('credentials', credentials);
  fastify.decorate(
    'providerCredentials',
    new ProviderCredentials(credentials, named, providers.defaultProvider),
  );
  fastify.decorate('oauthLogins', logins);
  fastify.decorate(
    'startOAuthLogin',
    (connection: Connection, reservation: LoginReservation, operationId: string, end: () => void) => {
      if (logins === null) throw new Error('no OAuth login is configured');
      const running = logins.start(
        reservation,
        {
          connectionId: connection.id,
          deliver: (loginId: string, event: LoginProgressEvent) => {
            connection.send(
              encodeEvent({
                event: LOGIN_PROGRESS_EVENT,
                session_id: null,
                operation_id: operationId,
                grant_generation: null,
                sequence: null,
                payload: { login_id: loginId, ...event },
              }),
            );
          },
          settle: (loginId, outcome) => {
            const code = outcome.state === 'failed' ? outcome.code : null;
            fastify.operations.settle(operationId, {
              ok: true,
              result: { login_id: loginId, state: outcome.state, code },
            });
            // The state and code only: nothing the user or the server sent.
            fastify.log.info({ login_id: loginId, state: outcome.state, code }, 'OAuth login ended');
          },
        },
        end,
      );
      return running;
    },
  );
  fastify.framing.declareEvent(LOGIN_PROGRESS_EVENT);
  fastify.framing.onDraining(() => {
    drain.abort();
    logins?.cancel();
  });
  fastify.addHook('onClose', async () => logins?.close());
};

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['configuration', 'framing'] });
