import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, deadlineAt } from '../clock.js';
import { callOutput } from './call-output.js';
import { mcpCallFailure } from './mcp-call-errors.js';
import type { McpCallOutcome } from './mcp-types.js';
import type { ServerConnection } from './server-connection.js';

export interface ToolCall {
  connection: ServerConnection;
  /** The server's own name for the tool. */
  tool: string;
  args: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  clock: Clock;
  timeoutMs: number;
}

/**
 * One `tools/call` on a connected server, settled by whichever comes first: its result, the deadline on
 * the clock (`timed_out`), the caller's signal (`cancelled`, at once) or the connection's loss (`server_failed`).
 * A call given up on is cancelled on the server with the protocol's notification.
 */
export function runToolCall({
  connection,
  tool,
  args,
  signal,
  clock,
  timeoutMs,
}: ToolCall): Promise<McpCallOutcome> {
  if (signal.aborted) return Promise.resolve(mcpCallFailure('cancelled'));
  const request = new AbortController();
  return new Promise<McpCallOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: McpCallOutcome, giveUp: boolean): void => {
      if (settled) return;
      settled = true;
      deadline.cancel();
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
      if (giveUp) request.abort();
    };
    const onAbort = (): void => settle(mcpCallFailure('cancelled'), true);
    const deadline = deadlineAt(clock, clock.now() + timeoutMs, () =>
      settle(mcpCallFailure('timed_out'), true),
    );
    signal.addEventListener('abort', onAbort, { once: true });
    connection.callTool(tool, args, request.signal).then(
      (result) => settle(outcomeOf(result), false),
      (error: unknown) => settle(mcpCallFailure(failureOf(connection, error)), false),
    );
  });
}

function outcomeOf(result: unknown): McpCallOutcome {
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success) return mcpCallFailure('invalid_result');
  return { ok: true, output: callOutput(parsed.data) };
}

/** A JSON-RPC error the server answered with is its refusal; anything else means the connection broke. */
function failureOf(connection: ServerConnection, error: unknown): 'server_failed' | 'tool_failed' {
  if (connection.hasClosed) return 'server_failed';
  if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) return 'tool_failed';
  return 'server_failed';
}
