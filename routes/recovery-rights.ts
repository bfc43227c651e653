import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RecoverySlot } from '../core/operations/operation-ledger.js';

/**
 * The rights the recovery methods are sent by (docs/protocol.md section 6, "Room for operations"): each
 * names the session or executor whose recovery slot a request may use, judged from the envelope and the
 * payload as sent, before anything checks them, and refusing nothing. A request without the right has
 * only the table's room; the method itself refuses it later as it would anyway.
 */
type Right = (request: FastifyRequest) => RecoverySlot | null;

/** A member of the payload as sent (not validated yet). */
function member(request: FastifyRequest, name: string): unknown {
  const payload = request.body as Record<string, unknown> | null;
  return typeof payload === 'object' && payload !== null ? payload[name] : undefined;
}

/** The session's control token on its controlling connection (or the token that closed it). */
export function sessionControl(fastify: FastifyInstance): Right {
  return (request) => {
    const { envelope, connection } = request.wire;
    const sessionId = envelope.session_id;
    if (sessionId === null || !fastify.sessions.holds(sessionId, envelope.control_token, connection))
      return null;
    return { kind: 'session', id: sessionId };
  };
}

/**
 * A claim of a session that exists: a claim needs no token, and taking a session back after a reconnect
 * is how its controller recovers, so every claim of a session uses that session's slot.
 */
export function existingSession(fastify: FastifyInstance): Right {
  return (request) => {
    const sessionId = request.wire.envelope.session_id;
    if (sessionId === null || fastify.history.workspaceOf(sessionId) === null) return null;
    return { kind: 'session', id: sessionId };
  };
}

/** One of the executor's proofs, current or candidate, in the payload's `resume_secret`. */
export function executorProof(fastify: FastifyInstance): Right {
  return (request) => {
    const executorId = member(request, 'executor_id');
    if (typeof executorId !== 'string') return null;
    if (!fastify.executors.proves(executorId, member(request, 'resume_secret'))) return null;
    return { kind: 'executor', id: executorId };
  };
}

/** The connection that holds the executor named by the payload's `executor_id`. */
export function executorHeld(fastify: FastifyInstance): Right {
  return (request) => {
    const executorId = member(request, 'executor_id');
    if (typeof executorId !== 'string') return null;
    if (!fastify.executors.isHeldBy(executorId, request.wire.connection.id)) return null;
    return { kind: 'executor', id: executorId };
  };
}
