import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import type { Clock } from '../core/clock.js';
import type { Connection } from '../core/connections/connection.js';
import { WireError } from '../core/errors.js';
import { ExecutorRegistry } from '../core/executors/executor-registry.js';
import { PROFILE_LIMITS } from '../core/limits.js';

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
  }
}

/**
 * Longest resume secret a payload may carry. Issued secrets are 43 characters (32 bytes, base64url);
 * anything up to the wire's token length reaches the constant-time comparison and is refused there
 * exactly like a wrong secret of the right length.
 */
const RESUME_SECRET_MAX_LENGTH = 128;

/** Payload and result pieces the six executor methods share. */
export const ResumeSecret = Type.String({ minLength: 1, maxLength: RESUME_SECRET_MAX_LENGTH });
export const ExecutorGeneration = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

/** One entry of `pending_calls`, member for member the registry's PendingCall. */
export const PendingCallResult = Type.Object({
  turn_id: Type.String(),
  call_id: Type.String(),
  provider_call_id: Type.String(),
  name: Type.String(),
  resource_id: Type.String(),
  revision_id: Type.String(),
  revision_sha256: Type.String(),
  status: Type.Union([Type.Literal('waiting_for_executor'), Type.Literal('pending')]),
  wait_kind: Type.Union([Type.Literal('availability'), Type.Literal('execution')]),
  remaining_ms: Type.Integer(),
});

/** The result of `executor.confirm` and `executor.resume`. */
export const ExecutorAttachResult = Type.Object({
  executor_id: Type.String(),
  executor_generation: Type.Integer(),
  pending_calls: Type.Array(PendingCallResult, { maxItems: PROFILE_LIMITS.calls }),
});

/**
 * Executor authority on the wire: one registry per daemon, fed by the executor methods and told
 * when a connection that reached it closes. Restart or shutdown discards every executor and proof.
 */
const executor: FastifyPluginAsync<{ clock: Clock }> = async (fastify, options) => {
  const registry = new ExecutorRegistry({ clock: options.clock });
  const tracked = new WeakSet<Connection>();

  fastify.decorate('executors', registry);
  fastify.decorate('executorConnection', (connection: Connection): string => {
    if (connection.closed) throw new WireError('stale_connection', 'the connection is closed');
    if (!tracked.has(connection)) {
      tracked.add(connection);
      connection.onClose(() => registry.connectionClosed(connection.id));
    }
    return connection.id;
  });

  fastify.addHook('onClose', async () => registry.clear());
};

export default fp(executor, { name: 'executor', fastify: '5.x', dependencies: ['framing', 'operations'] });
