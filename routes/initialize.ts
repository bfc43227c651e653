import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DAEMON } from '../config/daemon.js';
import { RETIRED_CAPABILITIES } from '../core/capabilities/describe.js';
import { APPLICATION_RESOURCES } from '../core/connections/connection.js';
import { WireError } from '../core/errors.js';
import { SERVICE_LIMITS, WIRE_LIMITS } from '../core/limits.js';

const Field = Type.String({ minLength: 1, maxLength: SERVICE_LIMITS.client_field_bytes });

export const Payload = Type.Object(
  {
    wire: Type.Integer(),
    client: Type.Object({ name: Field, version: Field }, { additionalProperties: false }),
    requested_capabilities: Type.Array(Field, { maxItems: SERVICE_LIMITS.requested_capabilities }),
  },
  { additionalProperties: false },
);

export const Result = Type.Object({
  wire: Type.Literal(2),
  instance_id: Type.String(),
  /** A hash of the real path of the home this daemon serves. */
  home_id: Type.String(),
  connection_id: Type.String(),
  daemon: Type.Object({ name: Type.String(), version: Type.String() }),
  negotiated_capabilities: Type.Array(Type.String()),
  capabilities: Type.Object({}, { additionalProperties: true }),
  limits: Type.Object({
    frame_bytes: Type.Integer(),
    payload_bytes: Type.Integer(),
    record_bytes: Type.Integer(),
  }),
});

/** `initialize`: the first request of every connection; negotiates the wire and the profile once. */
const initialize: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/initialize',
    {
      schema: { body: Payload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request) => {
      const { connection } = request.wire;
      if (connection.initialized) throw new WireError('already_initialized');
      const { wire, requested_capabilities: requested } = request.body;
      if (wire !== 2) throw new WireError('unsupported_wire_version');
      if (requested.some((token) => RETIRED_CAPABILITIES.includes(token))) {
        throw new WireError('unsupported_capability', 'a retired capability was requested');
      }
      if (!connection.offersProfile && requested.includes(APPLICATION_RESOURCES)) {
        throw new WireError('unsupported_capability', 'the profile is offered only on the Unix socket');
      }
      const negotiated = fastify.capabilityCatalog.offered.filter((token) => requested.includes(token));
      connection.initialized = true;
      connection.negotiated = negotiated;
      return {
        wire: 2 as const,
        instance_id: fastify.instanceId,
        home_id: fastify.homeId,
        connection_id: connection.id,
        daemon: DAEMON,
        negotiated_capabilities: [...negotiated],
        capabilities: fastify.capabilityCatalog.of(negotiated).capabilities,
        limits: WIRE_LIMITS,
      };
    },
  );
};

export default initialize;
