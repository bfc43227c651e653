import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WireId } from './schemas.js';
import { CallStatus, ExternalEffects } from './turn-schemas.js';

export const Payload = Type.Object({ turn_id: WireId }, { additionalProperties: false });

export const CallEvidence = Type.Object({
  call_id: Type.String(),
  provider_call_id: Type.String(),
  name: Type.String(),
  executor_id: Type.String(),
  executor_generation: Type.Integer(),
  resource_id: Type.String(),
  revision_id: Type.String(),
  revision_sha256: Type.String(),
  status: CallStatus,
  external_effects: ExternalEffects,
  wait_kind: Type.Union([Type.Literal('availability'), Type.Literal('execution'), Type.Null()]),
  remaining_ms: Type.Union([Type.Integer(), Type.Null()]),
});

export const Result = Type.Object({
  turn_id: Type.String(),
  application_manifest: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  calls: Type.Array(CallEvidence),
});

/**
 * `turn.application_evidence`: what happened to every application call of a turn, for the session's
 * current controller on a profile connection. A read: it renews no deadline and dispatches nothing.
 */
const turnApplicationEvidence: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/turn.application_evidence',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { session: 'required', control: 'required', operation: 'null', profile: true } },
    },
    async (request) => fastify.evidence.read(request.wire.envelope.session_id!, request.body.turn_id),
  );
};

export default turnApplicationEvidence;
