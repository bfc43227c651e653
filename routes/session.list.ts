import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { decodeCursor, encodeCursor } from './cursor.js';
import { PagePayload } from './schemas.js';

const SessionSummary = Type.Object({
  session_id: Type.String(),
  title: Type.Union([Type.String(), Type.Null()]),
  workspace: Type.String(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
  claimed: Type.Boolean(),
});

const Result = Type.Object({
  sessions: Type.Array(SessionSummary),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

/** `session.list`: every durable session, oldest first, a page at a time. */
const sessionList: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/session.list',
    {
      schema: { body: PagePayload, response: { 200: Result } },
      config: { wire: { session: 'null', control: 'null', operation: 'null' } },
    },
    async (request) => {
      const { cursor, limit } = request.body;
      const page = fastify.history.listSessions(decodeCursor('s', cursor), limit);
      return {
        sessions: page.items.map((row) => ({
          session_id: row.session_id,
          title: row.title,
          workspace: row.workspace,
          created_at: row.created_at,
          updated_at: row.updated_at,
          claimed: fastify.sessions.isClaimed(row.session_id),
        })),
        next_cursor: encodeCursor('s', page.next),
      };
    },
  );
};

export default sessionList;
