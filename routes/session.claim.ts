import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { EmptyPayload } from './schemas.js';
import { Snapshot } from './turn-schemas.js';

export const Result = Type.Object({
  control_token: Type.String(),
  grant_generation: Type.Integer(),
  snapshot: Snapshot,
});

type ClaimResult = { control_token: string; grant_generation: number; snapshot: unknown };

/** `session.claim`: makes this connection the controller, taking over from any other. */
const sessionClaim: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.claim',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: {
        wire: {
          session: 'required',
          control: 'null',
          operation: 'required',
          recovery: true,
          // The token is a secret: a lookup reports the claim without it.
          retain: ({ control_token: _token, ...rest }: ClaimResult) => rest,
        },
      },
    },
    // The turn coordinator builds the snapshot's payloads as records; their shape is the one above.
    async (request) =>
      fastify.sessions.claim(request.wire.envelope.session_id!, request.wire.connection) as Static<
        typeof Result
      >,
  );
};

export default sessionClaim;
