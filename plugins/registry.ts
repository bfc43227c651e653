import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import { ResourceRegistry } from '../core/registry/resource-registry.js';
import type { RegistrationGuard, StagedRegistration } from '../core/registry/staged-registration.js';
import type { NameCatalog } from '../core/resources/names.js';
import type { Grant } from '../core/sessions/session-control.js';
import type { WireContext } from '../routes/wire-route.js';

export interface RegistryPluginOptions {
  clock: Clock;
  /** The reserved-name catalog loaded at startup. */
  catalog: NameCatalog;
  /** The daemon's own directories (its home and state), which workspace captures never reach. */
  excludedDirectories: readonly string[];
}

declare module 'fastify' {
  interface FastifyInstance {
    resources: ResourceRegistry;
    /**
     * Admits a `session.resources.register` for the request's grant and takes the capture slot. The
     * registration is attributed to this daemon, the request's connection, its operation id and grant
     * generation, and publishes only while all of them still hold and its deadline has not passed.
     */
    stageRegistration(wire: WireContext, payload: unknown): StagedRegistration;
  }
}

/**
 * Session resource registries on the wire: one registry per daemon, told when a session's control starts
 * and ends so that claims, releases, takeovers and disconnects reach it (and discard a staged capture of
 * the previous authority).
 *
 * Registries take no idle-stop hold: they never keep the daemon running. Neither does a capture: it is
 * staged only for a controller's open connection, which already keeps the daemon from idling, and the
 * connection's close discards it.
 */
const registry: FastifyPluginAsync<RegistryPluginOptions> = async (fastify, options) => {
  const { clock, catalog } = options;
  const resources = new ResourceRegistry({
    clock,
    catalog: () => catalog,
    workspaceOf: (sessionId) => {
      const workspace = fastify.sessions.workspaces.known(sessionId);
      if (workspace === null) throw new Error('a controlled session has no history row');
      return workspace;
    },
    excludedDirectories: options.excludedDirectories,
    reader: fastify.capture.reader,
  });

  fastify.decorate('resources', resources);
  fastify.decorate('stageRegistration', (wire: WireContext, payload: unknown): StagedRegistration => {
    const { connection, envelope, grant } = wire;
    if (!grant || envelope.operation_id === null)
      throw new Error('registration needs a grant and an operation');
    const operationId = envelope.operation_id;
    const guard: RegistrationGuard = () =>
      !connection.closed &&
      stillControls(grant, envelope.control_token) &&
      fastify.operations.lookup(operationId)?.status === 'accepted';
    return resources.beginRegistration(
      grant.sessionId,
      payload,
      {
        instance_id: fastify.instanceId,
        connection_id: connection.id,
        operation_id: operationId,
        grant_generation: grant.generation,
      },
      guard,
    );
  });

  /** The request's token still authorizes its connection, at the generation it was admitted with. */
  function stillControls(grant: Grant, token: string | null): boolean {
    try {
      return (
        fastify.sessions.authorize(grant.sessionId, token, grant.connection).generation === grant.generation
      );
    } catch {
      return false;
    }
  }

  fastify.sessions.onControlStarted((sessionId) => resources.controlStarted(sessionId));
  fastify.sessions.onControlEnded((sessionId) => resources.controlEnded(sessionId));
  // A registration waiting for its read is answered at once rather than holding up the drain.
  fastify.framing.onDraining(() => resources.close());
  fastify.addHook('onClose', async () => resources.close());
};

export default fp(registry, {
  name: 'registry',
  fastify: '5.x',
  dependencies: ['framing', 'history', 'operations', 'control', 'capture'],
});
