import type { FastifyRequest } from 'fastify';
import type { Connection } from '../core/connections/connection.js';
import type { RecoverySlot, SplicedJson } from '../core/operations/operation-ledger.js';
import type { Grant } from '../core/sessions/session-control.js';
import type { EnvelopeRules, RequestEnvelope } from '../core/wire/envelope.js';

/** What a wire method declares in its route's `config.wire`. */
export interface WireRouteOptions extends EnvelopeRules {
  /** Only on connections that selected `application_resources_v1`. */
  profile?: boolean;
  /**
   * Whether the control plugin checks the envelope's control token before the handler runs.
   * Defaults to true when `control` is required; a method that judges the token itself says false.
   */
  authorize?: boolean;
  /**
   * The success answer is an acceptance: the method's domain records the operation's `accepted` result
   * and settles it later (a turn, with its terminal). A refusal settles at once as usual.
   */
  settlesLater?: boolean;
  /**
   * The operation is not the session controller's to reconcile but its sender's (an executor's result):
   * `operation.lookup` reads it without the session's control, as it reads executor operations.
   */
  unscoped?: boolean;
  /**
   * A method a client recovers with after a disconnect or while the operation table is full: names the
   * session or executor whose recovery slot the request may use by the right it presents (its control
   * token, an executor's proof or attachment), or null when it presents none (docs/protocol.md section 6,
   * "Room for operations"). Judged before anything refuses the request; it refuses nothing itself.
   */
  recovery?: (request: FastifyRequest) => RecoverySlot | null;
  /** Reduces a successful result to what `operation.lookup` may retain (secrets never are). */
  retain?: (result: never) => unknown;
}

/** Per-request wire state, set by the framing plugin before any other hook runs. */
export interface WireContext {
  connection: Connection;
  envelope: RequestEnvelope;
  /** Set by the control plugin when the method requires the session's control. */
  grant: Grant | null;
  /** Set by the operations plugin when it reserved the envelope's operation id. */
  operationReserved: boolean;
  /**
   * Set by a handler whose retained result holds a part shared with other outcomes (a claim's
   * snapshot): retained in place of the method's `retain` projection of its answer.
   */
  retained: SplicedJson | null;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    wire?: WireRouteOptions;
  }
  interface FastifyRequest {
    wire: WireContext;
  }
}
