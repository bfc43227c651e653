import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import type { Connection } from '../core/connections/connection.js';
import { WireError } from '../core/errors.js';
import { ExecutorRegistry } from '../core/executors/executor-registry.js';

declare module 'fastify' {
  interface FastifyInstance {
    executors: ExecutorRegistry;
    /**
     * The id under which `connection` holds executors, for an executor method about to run. The first
     * time a connection reaches the registry, its close is tied to `connectionClosed`, so whatever it
     * holds detaches when it goes. A connection that is already closed is refused: nothing it asks
     * for could be answered, so nothing changes for it.
     */
    executorConnection(connection: Connection): string;
    /** An open connection that reached the executor methods, by id: where callback events go. */
    executorConnectionById(connectionId: string): Connection | undefined;
  }
}

/**
 * Executor authority on the wire: one registry per daemon, fed by the executor methods and told
 * when a connection that reached it closes. Restart or shutdown discards every executor and proof.
 */
const executor: FastifyPluginAsync<{ clock: Clock }> = async (fastify, options) => {
  const registry = new ExecutorRegistry({ clock: options.clock });
  const tracked = new Map<string, Connection>();

  fastify.decorate('executors', registry);
  fastify.decorate('executorConnection', (connection: Connection): string => {
    if (connection.closed) throw new WireError('stale_connection', 'the connection is closed');
    if (!tracked.has(connection.id)) {
      tracked.set(connection.id, connection);
      connection.onClose(() => {
        tracked.delete(connection.id);
        registry.connectionClosed(connection.id);
      });
    }
    return connection.id;
  });

  fastify.decorate('executorConnectionById', (connectionId: string) => tracked.get(connectionId));
  fastify.addHook('onClose', async () => registry.clear());
};

export default fp(executor, { name: 'executor', fastify: '5.x', dependencies: ['framing', 'operations'] });
