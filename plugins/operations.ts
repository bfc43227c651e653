import type { FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Clock } from '../core/clock.js';
import type { ErrorCode } from '../core/errors.js';
import { operationBounds } from '../core/operations/operation-bounds.js';
import { type OperationBounds, OperationLedger } from '../core/operations/operation-ledger.js';
import { saturationLogger } from './saturation-log.js';

declare module 'fastify' {
  interface FastifyInstance {
    operations: OperationLedger;
  }
}

/**
 * Operation ids: every mutation reserves its envelope's fresh operation id before anything else
 * judges it, charged to its connection (and, for a recovery method sent by right, when the table has no
 * room for it, to its session's or executor's slot), and its outcome, success or refusal, is retained for
 * `operation.lookup`. A bound of the table that saturates, or clears, is logged once.
 */
const operations: FastifyPluginAsync<{ clock: Clock; bounds?: OperationBounds }> = async (
  fastify,
  options,
) => {
  const ledger = new OperationLedger({
    clock: options.clock,
    bounds: options.bounds ?? operationBounds(),
    saturation: saturationLogger(fastify.log),
  });
  fastify.decorate('operations', ledger);

  fastify.addHook('onRequest', (request, _reply, done) => {
    const wire = request.routeOptions.config.wire;
    if (wire?.operation !== 'required') return done();
    // The framing plugin admitted the request, so a method that requires an operation id has one.
    const { envelope, connection } = request.wire;
    try {
      // Only a session that exists scopes its operations; a refusal for a missing one is anyone's to read.
      const scope =
        !wire.unscoped &&
        envelope.session_id !== null &&
        fastify.history.workspaceOf(envelope.session_id) !== null
          ? envelope.session_id
          : null;
      ledger.begin(envelope.operation_id!, envelope.method, scope, {
        account: connection.id,
        slot: wire.recovery?.(request) ?? null,
      });
      request.wire.operationReserved = true;
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!request.wire?.operationReserved || typeof payload !== 'string') return done(null, payload);
    const operationId = request.wire.envelope.operation_id!;
    const wire = request.routeOptions.config.wire;
    if (reply.statusCode < 400 && wire?.settlesLater) {
      // The method's own domain recorded the acceptance and will settle it.
    } else if (reply.statusCode < 400 && request.wire.retained) {
      ledger.settleSpliced(operationId, request.wire.retained);
    } else if (reply.statusCode < 400) {
      const retain = wire?.retain as ((result: unknown) => unknown) | undefined;
      if (retain) ledger.settle(operationId, { ok: true, result: retain(JSON.parse(payload)) });
      else ledger.settleEncoded(operationId, payload);
    } else {
      const error = JSON.parse(payload) as { code: ErrorCode; message: string };
      ledger.settle(operationId, { ok: false, error });
    }
    done(null, payload);
  });
};

export default fp(operations, { name: 'operations', fastify: '5.x', dependencies: ['framing', 'history'] });
