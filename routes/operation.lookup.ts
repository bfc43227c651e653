import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WireError } from '../core/errors.js';
import { withoutManifests } from '../core/turns/application-manifest.js';
import { WireId } from './schemas.js';

export const Payload = Type.Object({ operation_id: WireId }, { additionalProperties: false });

export const Result = Type.Object({
  operation_id: Type.String(),
  method: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([
    Type.Literal('accepted'),
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('unknown'),
  ]),
  result: Type.Unknown(),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()]),
});

/**
 * `operation.lookup`: reconciles a mutation whose response was lost. An operation that named a
 * session is reported only to that session's current controller.
 */
const operationLookup: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/operation.lookup',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { session: 'optional', control: 'optional', operation: 'null', authorize: false } },
    },
    async (request) => {
      const { envelope, connection } = request.wire;
      if ((envelope.session_id === null) !== (envelope.control_token === null)) {
        throw new WireError('invalid_request', 'session_id and control_token are set together or not at all');
      }
      const operationId = request.body.operation_id;
      const record = fastify.operations.lookup(operationId);
      if (!record) {
        return {
          operation_id: operationId,
          method: null,
          status: 'unknown' as const,
          result: null,
          error: null,
        };
      }
      if (record.session_id !== null) {
        if (envelope.session_id !== record.session_id) throw new WireError('unauthorized');
        fastify.sessions.authorize(record.session_id, envelope.control_token, connection);
      }
      return {
        operation_id: record.operation_id,
        method: record.method,
        status: record.status,
        // Manifests are the profile's: ordinary connections never see one, even of a selected turn.
        result: connection.profileSelected ? record.result : withoutManifests(record.result),
        error: record.error,
      };
    },
  );
};

export default operationLookup;
