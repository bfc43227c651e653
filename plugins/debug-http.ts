import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Optional read-only inspection over plain HTTP on the daemon's socket (`--debug-http`). It shows
 * counts and health only: never tokens, secrets, source bodies or paths.
 */
const debugHttp: FastifyPluginAsync = async (fastify) => {
  const started = Date.now();
  fastify.get('/debug/health', async () => ({
    ok: true,
    instance_id: fastify.instanceId,
    uptime_ms: Date.now() - started,
  }));
  fastify.get('/debug/counts', async () => {
    const resources = fastify.resources.stats();
    return {
      connections: fastify.framing.connections.size,
      requests_in_flight: fastify.framing.inFlight,
      sessions: fastify.history.countSessions(),
      claimed_sessions: fastify.sessions.claimedCount,
      retained_operations: fastify.operations.size,
      executors: fastify.executors.size,
      registries: resources.registries,
      retained_entries: resources.retained_entries,
      retained_snapshots: resources.retained_snapshots,
      retained_bytes: resources.retained_bytes,
      capture_slot_busy: resources.capture_slot_busy,
    };
  });
};

export default fp(debugHttp, {
  name: 'debug-http',
  fastify: '5.x',
  dependencies: ['framing', 'history', 'control', 'operations', 'executor', 'registry'],
});
