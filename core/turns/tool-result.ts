import { WireError } from '../errors.js';
import { PROFILE_LIMITS } from '../limits.js';
import { validateAgainstSchema } from '../resources/tool-contract.js';
import { utf8ByteLength } from '../resources/unicode.js';
import type { ApplicationCall, CallOutcome } from './application-call.js';

/** The payload of `turn.application_tool_result`, once its schema has been checked. */
export interface ToolResultPayload {
  turn_id: string;
  call_id: string;
  executor_id: string;
  executor_generation: number;
  resource_id: string;
  revision_id: string;
  revision_sha256: string;
  outcome:
    | { status: 'success'; value: Record<string, unknown> }
    | { status: 'error'; code: 'execution_failed' | 'permission_denied'; message: string };
}

export const toolResultRefusals = {
  binding: () => new WireError('invalid_payload', 'the result does not echo the call binding it answers'),
  value: () => new WireError('invalid_payload', "the result value does not satisfy the tool's output schema"),
  valueTooLarge: () => new WireError('invalid_payload', 'the result value exceeds its byte limit'),
  messageTooLarge: () => new WireError('invalid_payload', 'the error message exceeds its byte limit'),
} as const;

/**
 * The content rules of a result: the full accepted identity echoed (executor, resource, revision and its
 * hash), a success value within 16 KiB that satisfies the accepted output schema, an error message within
 * 512 bytes. A refusal leaves the call pending.
 */
export function validateToolResult(call: ApplicationCall, payload: ToolResultPayload): CallOutcome {
  const { identity } = call;
  if (
    payload.executor_id !== identity.executor.executor_id ||
    payload.resource_id !== identity.tool.resource_id ||
    payload.revision_id !== identity.tool.revision_id ||
    payload.revision_sha256 !== identity.tool.revision_sha256
  ) {
    throw toolResultRefusals.binding();
  }
  const { outcome } = payload;
  if (outcome.status === 'error') {
    if (utf8ByteLength(outcome.message) > PROFILE_LIMITS.error_message_bytes) {
      throw toolResultRefusals.messageTooLarge();
    }
    return { status: 'error', code: outcome.code, message: outcome.message };
  }
  if (utf8ByteLength(JSON.stringify(outcome.value)) > PROFILE_LIMITS.result_bytes) {
    throw toolResultRefusals.valueTooLarge();
  }
  if (!validateAgainstSchema(identity.contract.output_schema, outcome.value))
    throw toolResultRefusals.value();
  return { status: 'success', value: outcome.value };
}
