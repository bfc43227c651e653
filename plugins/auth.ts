import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { readStoredApiKey, removeStoredApiKey, writeStoredApiKey } from '../config/credentials-file.js';
import { CredentialStore } from '../core/auth/credential-store.js';

export interface AuthPluginOptions {
  home: string;
  /** The key of the environment (`MAGI_API_KEY`), or null. */
  environmentKey: string | null;
}

declare module 'fastify' {
  interface FastifyInstance {
    credentials: CredentialStore;
  }
}

/** The provider's credentials: the environment's key, else the key `auth.login` stored in the home. */
const auth: FastifyPluginAsync<AuthPluginOptions> = async (fastify, { home, environmentKey }) => {
  fastify.decorate(
    'credentials',
    new CredentialStore({
      environmentKey,
      storedKey: await readStoredApiKey(home),
      persistence: {
        write: (apiKey) => writeStoredApiKey(home, apiKey),
        remove: () => removeStoredApiKey(home),
      },
    }),
  );
};

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['configuration'] });
