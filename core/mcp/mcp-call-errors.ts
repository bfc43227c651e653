/** Every way an MCP call fails, once, with its fixed message: never anything the server or the model sent. */
export const MCP_CALL_MESSAGES = {
  server_unavailable: 'the MCP server is not ready',
  unknown_tool: 'no such MCP tool',
  invalid_arguments: 'the arguments nest deeper than an MCP call may carry; nothing was sent to the server',
  timed_out: 'the MCP call took too long',
  cancelled: 'the MCP call was cancelled',
  server_failed: 'the MCP server stopped during the call',
  tool_failed: 'the MCP server refused the call',
  invalid_result: 'the MCP server answered with a malformed result',
} as const;

export type McpCallError = keyof typeof MCP_CALL_MESSAGES;

export function mcpCallFailure(code: McpCallError): { ok: false; code: McpCallError; message: string } {
  return { ok: false, code, message: MCP_CALL_MESSAGES[code] };
}
