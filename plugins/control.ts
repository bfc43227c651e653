import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import type { HiddenPlaces } from '../core/confinement/hidden-places.js';
import { SessionControl } from '../core/sessions/session-control.js';
import { encodeEvent } from '../core/wire/frames.js';

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionControl;
    /** What no tool may read: the credential places of the user's home and the system's secrets. */
    hiddenPlaces: HiddenPlaces;
  }
}

/**
 * Session control: claims, tokens and takeover. Every method whose envelope requires a control
 * token is authorized here before its payload is even validated; the handler receives the grant.
 */
const control: FastifyPluginAsync<{ clock: Clock; hidden: HiddenPlaces }> = async (fastify, options) => {
  const sessions = new SessionControl({
    history: fastify.history,
    clock: options.clock,
    hidden: options.hidden,
    revoked: (connection, sessionId, generation) => {
      connection.send(
        encodeEvent({
          event: 'session.control_revoked',
          session_id: sessionId,
          operation_id: null,
          grant_generation: generation,
          sequence: null,
          payload: { session_id: sessionId, grant_generation: generation, reason: 'takeover' },
        }),
      );
    },
  });
  fastify.decorate('sessions', sessions);
  fastify.decorate('hiddenPlaces', options.hidden);
  fastify.framing.declareEvent('session.control_revoked');

  fastify.addHook('onRequest', (request, _reply, done) => {
    const wire = request.routeOptions.config.wire;
    if (wire?.control !== 'required' || wire.authorize === false) return done();
    const { envelope, connection } = request.wire;
    try {
      request.wire.grant = sessions.authorize(envelope.session_id!, envelope.control_token, connection);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
};

export default fp(control, {
  name: 'control',
  fastify: '5.x',
  dependencies: ['framing', 'history', 'operations'],
});
