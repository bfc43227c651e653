import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ToolResultPayload as ToolResult } from '../core/turns/tool-result.js';
import { executorHeld } from './recovery-rights.js';
import { ToolResultPayload } from './turn-schemas.js';

export const Result = Type.Object({ call_id: Type.String(), status: Type.Literal('accepted') });

/**
 * `turn.application_tool_result`: the executor's result of one dispatched call, on its attached connection
 * at its current generation, echoing the call's whole binding. The session is the call's own, with no
 * control token: executor authority is what counts.
 */
const turnApplicationToolResult: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.post(
    '/turn.application_tool_result',
    {
      schema: { body: ToolResultPayload, response: { 200: Result } },
      config: {
        wire: {
          session: 'required',
          control: 'null',
          operation: 'required',
          profile: true,
          unscoped: true,
          recovery: executorHeld(fastify),
        },
      },
    },
    async (request) =>
      fastify.turns.submitResult(
        request.wire.connection.id,
        request.wire.envelope.session_id!,
        request.body as ToolResult,
      ),
  );
};

export default turnApplicationToolResult;
