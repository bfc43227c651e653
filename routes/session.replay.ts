import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WireError } from '../core/errors.js';
import { SERVICE_LIMITS } from '../core/limits.js';
import { withoutManifests } from '../core/turns/application-manifest.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { PagePayload } from './schemas.js';

const ReplayRecord = Type.Object({
  sequence: Type.Integer(),
  kind: Type.String(),
  created_at: Type.Integer(),
  data: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
  omitted: Type.Boolean(),
});

export const Result = Type.Object({
  records: Type.Array(ReplayRecord),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** `session.replay`: a session's durable history, read-only, needing no control. */
const sessionReplay: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.replay',
    {
      schema: { body: PagePayload, response: { 200: Result } },
      config: { wire: { session: 'required', control: 'null', operation: 'null' } },
    },
    async (request) => {
      const sessionId = request.wire.envelope.session_id!;
      if (!fastify.history.session(sessionId)) throw new WireError('unknown_session');
      const { cursor, limit } = request.body;
      const page = fastify.history.records(
        sessionId,
        decodeCursor('r', cursor),
        limit,
        SERVICE_LIMITS.replay_page_bytes,
      );
      // Manifests in turn records are the profile's: ordinary connections read the records without them.
      const records = request.wire.connection.profileSelected
        ? page.items
        : (withoutManifests(page.items) as typeof page.items);
      return { records, next_cursor: encodeCursor('r', page.next) };
    },
  );
};

export default sessionReplay;
