import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, deadlineAt } from '../clock.js';
import { callOutput } from './call-output.js';
import { mcpCallFailure } from './mcp-call-errors.js';
import { MCP_LIMITS } from './mcp-limits.js';
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
      (error: unknown) => settle(failureOf(connection, error), false),
    );
  });
}

function outcomeOf(result: unknown): McpCallOutcome {
  const parsed = CallToolResultSchema.safeParse(result);
  if (!parsed.success) return mcpCallFailure('invalid_result');
  return { ok: true, output: callOutput(parsed.data) };
}

/** A JSON-RPC error the server answered with is its refusal; anything else means the connection broke. */
function failureOf(connection: ServerConnection, error: unknown): McpCallOutcome {
  if (connection.hasClosed) return mcpCallFailure('server_failed');
  if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed)
    return refusal(connection, error);
  return mcpCallFailure('server_failed');
}

/**
 * The server's refusal as the model reads it: the fixed text, the JSON-RPC error code and the server's own
 * message (secrets replaced, one line, bounded), so that the model can tell why.
 */
function refusal(connection: ServerConnection, error: McpError): McpCallOutcome {
  const failure = mcpCallFailure('tool_failed');
  if (!Number.isSafeInteger(error.code)) return failure;
  // The SDK's message is `MCP error <code>: <the server's message>`, and a server built on the SDK that
  // throws an McpError sends its message with the same prefix.
  const prefix = `MCP error ${error.code}: `;
  let said = error.message;
  while (said.startsWith(prefix)) said = said.slice(prefix.length);
  const shown = connection.shown(said, MCP_LIMITS.error_message_bytes);
  return { ...failure, message: `${failure.message} (${error.code})${shown === '' ? '' : `: ${shown}`}` };
}
