import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import { HistoryUnavailableError, isStorageFailure } from '../core/history/history-unavailable.js';
import { TurnCoordinator } from '../core/turns/turn-coordinator.js';
import { encodeEvent } from '../core/wire/frames.js';

declare module 'fastify' {
  interface FastifyInstance {
    turns: TurnCoordinator;
  }
}

const TURN_EVENTS = ['turn.started', 'turn.assistant_delta', 'turn.activity', 'turn.terminal'] as const;
const CALLBACK_EVENTS = ['turn.application_tool_call', 'turn.application_tool_cancel'] as const;

/**
 * Turns on the wire: one coordinator per daemon over the registry, the executors, the provider and the
 * store. Turn events go to whoever controls the session when they are sent (a turn outlives its
 * controller's connection); callback events go only to the executor's attached connection. At startup
 * the turns a stopped daemon left active are recorded as interrupted; at shutdown every active turn is
 * ended and its terminal recorded before the store closes.
 */
const turns: FastifyPluginAsync<{ clock: Clock }> = async (fastify, { clock }) => {
  const coordinator = new TurnCoordinator({
    clock,
    history: fastify.history,
    registry: fastify.resources,
    executors: fastify.executors,
    provider: fastify.chatProvider,
    evidence: fastify.evidence,
    operations: fastify.operations,
    holdIdle: () => fastify.idle.hold(),
    toolbox: fastify.agent.toolbox,
    instructions: fastify.agent.instructions,
    firstTurnCompleted: (sessionId, prompt, answer, selection) =>
      fastify.titles?.firstTurnCompleted(sessionId, prompt, answer, selection),
    sink: {
      toController(event, lossy) {
        const controller = fastify.sessions.controller(event.sessionId);
        // Activity nobody can receive is a drop like any other: its sequence number is a gap.
        if (!controller || controller.connection.closed) return !lossy;
        const { connection, generation } = controller;
        if (lossy && connection.outbound.congested) return false;
        connection.send(
          encodeEvent({
            event: event.event,
            session_id: event.sessionId,
            operation_id: event.operationId,
            grant_generation: generation,
            sequence: event.sequence,
            payload: event.payload(connection.profileSelected),
          }),
        );
        return true;
      },
      controllerNegotiated(sessionId, capability) {
        return fastify.sessions.controller(sessionId)?.connection.negotiated.includes(capability) === true;
      },
      toExecutor(connectionId, event) {
        const connection = fastify.executorConnectionById(connectionId);
        if (!connection || connection.closed) return false;
        // Reliable: an executor that cannot keep up is disconnected by its queue's bound, never skipped.
        connection.send(
          encodeEvent({
            event: event.event,
            session_id: event.sessionId,
            operation_id: null,
            grant_generation: null,
            sequence: null,
            payload: event.payload,
          }),
        );
        return true;
      },
    },
  });
  let interrupted: number;
  try {
    interrupted = coordinator.recover();
  } catch (error) {
    // Serving would leave those turns active in the history with nothing to end them.
    throw isStorageFailure(error) ? new HistoryUnavailableError('written', error) : error;
  }
  if (interrupted > 0)
    fastify.log.warn({ turns: interrupted }, 'turns interrupted by the last stop were recorded as failed');

  fastify.decorate('turns', coordinator);
  for (const event of TURN_EVENTS) fastify.framing.declareEvent(event);
  for (const event of CALLBACK_EVENTS) fastify.framing.declareEvent(event, { profile: true });
  fastify.sessions.provideSnapshot((sessionId, connection) =>
    coordinator.snapshot(sessionId, connection.profileSelected),
  );
  fastify.executors.providePendingCalls((executorId) => coordinator.pendingCalls(executorId));
  // A session is live while it has a controller or a running turn; its workspace is its own.
  fastify.agent.toolbox.provideOtherWorkspaces((sessionId) => {
    const live = new Set([...fastify.sessions.claimedSessionIds(), ...coordinator.activeSessionIds()]);
    live.delete(sessionId);
    return [...live].flatMap((id) => fastify.sessions.workspaces.realOf(id) ?? []);
  });
  // Calls waiting for an executor are dispatched once its confirm or resume answer has been written.
  fastify.addHook('onResponse', (request, reply, done) => {
    const url = request.routeOptions.url;
    if ((url === '/executor.resume' || url === '/executor.confirm') && reply.statusCode < 400) {
      coordinator.executorAttached((request.body as { executor_id: string }).executor_id);
    }
    done();
  });
  fastify.addHook('onClose', async () => coordinator.close());
};

export default fp(turns, {
  name: 'turns',
  fastify: '5.x',
  dependencies: [
    'framing',
    'history',
    'operations',
    'control',
    'executor',
    'registry',
    'provider',
    'idle-stop',
    'evidence',
    'titles',
    'agent',
  ],
});
