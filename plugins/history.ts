import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { HistoryStore } from '../core/history/history-store.js';
import { HistoryUnavailableError, isStorageFailure } from '../core/history/history-unavailable.js';

declare module 'fastify' {
  interface FastifyInstance {
    history: HistoryStore;
  }
}

export interface HistoryOptions {
  /** The daemon's state directory; the store lives in it. */
  stateDir: string;
}

/** The durable store of sessions and their records, open while the daemon runs. */
const history: FastifyPluginAsync<HistoryOptions> = async (fastify, options) => {
  let store: HistoryStore;
  try {
    store = new HistoryStore(join(options.stateDir, 'history.sqlite3'));
  } catch (error) {
    throw isStorageFailure(error) ? new HistoryUnavailableError('opened', error) : error;
  }
  fastify.decorate('history', store);
  // Every durable write already made is committed before the store closes.
  fastify.addHook('onClose', async () => store.close());
};

export default fp(history, { name: 'history', fastify: '5.x' });
