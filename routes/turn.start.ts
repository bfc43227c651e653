import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { ModelSelection } from '../core/provider/chat-provider.js';
import type { ProviderRouter } from '../core/provider/provider-router.js';
import { ApplicationSelection, TURN_MUTATION } from './turn-schemas.js';

export const Payload = Type.Object(
  { prompt: Type.String({ minLength: 1 }), application: Type.Optional(ApplicationSelection) },
  { additionalProperties: false },
);

export const Result = Type.Object({
  turn_id: Type.String(),
  status: Type.Literal('accepted'),
  application_manifest: Type.Optional(
    Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  ),
});

/** Workers of accepted turns, started once their acceptance has been written. */
const accepted = new WeakMap<FastifyRequest, () => void>();

/**
 * `turn.start`: admission of the complete snapshot, then the turn's worker. The acceptance is written
 * before the turn's `turn.started`; the operation stays `accepted` until the turn's terminal settles it.
 */
const turnStart: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/turn.start',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { ...TURN_MUTATION, settlesLater: true } },
      onResponse: (request, _reply, done) => {
        accepted.get(request)?.();
        done();
      },
    },
    async (request) => {
      const { envelope, connection, grant } = request.wire;
      const sessionId = envelope.session_id!;
      const workspace = fastify.history.workspaceOf(sessionId);
      const confined = await fastify.sessions.workspaces.of(sessionId);
      const { acceptance, begin } = await fastify.turns.start({
        sessionId,
        operationId: envelope.operation_id!,
        connectionId: connection.id,
        selected: connection.profileSelected,
        controller: {
          instance_id: fastify.instanceId,
          connection_id: connection.id,
          operation_id: envelope.operation_id!,
          grant_generation: grant!.generation,
        },
        prompt: request.body.prompt,
        workspace: confined!,
        application: request.body.application,
        selection: routable(fastify.modelSettings.selection(workspace), fastify.provider.router),
      });
      accepted.set(request, begin);
      return acceptance;
    },
  );
};

export default turnStart;

/** A selection no configured provider serves is none: the turn is refused `provider_unavailable`. */
function routable(selection: ModelSelection | null, router: ProviderRouter | null): ModelSelection | null {
  return selection !== null && router?.route(selection.model) ? selection : null;
}
