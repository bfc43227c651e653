import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import type { ErrorCode } from '../core/errors.js';
import { OPERATION_RETENTION_MS, SERVICE_LIMITS } from '../core/limits.js';
import { OperationLedger } from '../core/operations/operation-ledger.js';

declare module 'fastify' {
  interface FastifyInstance {
    operations: OperationLedger;
  }
}

/**
 * Operation ids: every mutation reserves its envelope's fresh operation id before anything else
 * judges it, and its outcome, success or refusal, is retained for `operation.lookup`.
 */
const operations: FastifyPluginAsync<{ clock: Clock }> = async (fastify, options) => {
  const ledger = new OperationLedger({
    clock: options.clock,
    capacity: SERVICE_LIMITS.retained_operations,
    retentionMs: OPERATION_RETENTION_MS,
  });
  fastify.decorate('operations', ledger);

  fastify.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.wire?.operation !== 'required') return done();
    // The framing plugin admitted the request, so a method that requires an operation id has one.
    const { envelope } = request.wire;
    try {
      // Only a session that exists scopes its operations; a refusal for a missing one is anyone's to read.
      const scope =
        !request.routeOptions.config.wire?.unscoped &&
        envelope.session_id !== null &&
        fastify.history.workspaceOf(envelope.session_id) !== null
          ? envelope.session_id
          : null;
      ledger.begin(envelope.operation_id!, envelope.method, scope);
      request.wire.operationReserved = true;
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!request.wire?.operationReserved || typeof payload !== 'string') return done(null, payload);
    const operationId = request.wire.envelope.operation_id!;
    const body = JSON.parse(payload) as unknown;
    if (reply.statusCode < 400 && request.routeOptions.config.wire?.settlesLater) {
      // The method's own domain recorded the acceptance and will settle it.
    } else if (reply.statusCode < 400) {
      const retain = request.routeOptions.config.wire?.retain as ((result: unknown) => unknown) | undefined;
      ledger.settle(operationId, { ok: true, result: retain ? retain(body) : body });
    } else {
      ledger.settle(operationId, { ok: false, error: body as { code: ErrorCode; message: string } });
    }
    done(null, payload);
  });
};

export default fp(operations, { name: 'operations', fastify: '5.x', dependencies: ['framing', 'history'] });
