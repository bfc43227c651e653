import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import { SharedJson, SplicedJson } from '../core/operations/operation-ledger.js';
import { existingSession } from './recovery-rights.js';
import { EmptyPayload } from './schemas.js';
import { Snapshot } from './turn-schemas.js';

export const Result = Type.Object({
  control_token: Type.String(),
  grant_generation: Type.Integer(),
  snapshot: Snapshot,
});

/**
 * `session.claim`: makes this connection the controller, taking over from any other. A lookup reports the
 * claim without its token (a secret), and the claims of a session retain one encoding of its snapshot
 * between them while the snapshot is unchanged, not a copy each.
 */
const sessionClaim: FastifyPluginAsyncTypebox = async (fastify) => {
  const encodings = new WeakMap<object, SharedJson>();
  const encoded = (snapshot: object): SharedJson => {
    let shared = encodings.get(snapshot);
    if (!shared) {
      shared = new SharedJson(JSON.stringify(snapshot));
      encodings.set(snapshot, shared);
    }
    return shared;
  };
  fastify.post(
    '/session.claim',
    {
      schema: { body: EmptyPayload, response: { 200: Result } },
      config: {
        wire: {
          session: 'required',
          control: 'null',
          operation: 'required',
          recovery: existingSession(fastify),
        },
      },
    },
    async (request) => {
      const claimed = fastify.sessions.claim(request.wire.envelope.session_id!, request.wire.connection);
      request.wire.retained = new SplicedJson(
        `{"grant_generation":${claimed.grant_generation},"snapshot":`,
        encoded(claimed.snapshot),
        '}',
      );
      // The turn coordinator builds the snapshot's payloads as records; their shape is the one above.
      return claimed as Static<typeof Result>;
    },
  );
};

export default sessionClaim;
