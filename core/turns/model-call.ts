import { PROFILE_LIMITS } from '../limits.js';
import type { ToolCall } from '../provider/chat-provider.js';
import { utf8ByteLength } from '../resources/unicode.js';

/** The refusals every kind of call shares, with the fixed texts the model reads. */
export const MODEL_CALL_REFUSALS = {
  unknown_tool: 'no such tool in this turn',
  invalid_arguments: "the arguments do not satisfy the tool's input schema",
  invalid_call_id: 'the call id is empty, too long, or repeated in this turn',
  too_many_calls: 'the round asked for more calls than the daemon runs in one round; this one did not run',
} as const;

/**
 * The checks a model call passes whoever runs it: within the calls its round runs; a provider call id that
 * is nonempty, within its bound and not in `usedIds`, those of the admitted calls of its loop; arguments
 * within `argumentBytes` (the profile's bound unless the caller's tools have their own; the provider
 * adapter marks those past its own bound, 4 MiB, which it did not keep) that parse as JSON. Returns the
 * parsed arguments, or the refusal.
 */
export function readModelCall(
  usedIds: ReadonlySet<string>,
  toolCall: ToolCall,
  argumentBytes: number = PROFILE_LIMITS.argument_bytes,
): { arguments: unknown } | 'too_many_calls' | 'invalid_call_id' | 'invalid_arguments' {
  if (toolCall.exceeds === 'round_calls') return 'too_many_calls';
  const idBytes = utf8ByteLength(toolCall.id);
  if (idBytes === 0 || idBytes > PROFILE_LIMITS.provider_call_id_bytes || usedIds.has(toolCall.id)) {
    return 'invalid_call_id';
  }
  if (toolCall.exceeds === 'arguments' || utf8ByteLength(toolCall.arguments) > argumentBytes) {
    return 'invalid_arguments';
  }
  try {
    return { arguments: JSON.parse(toolCall.arguments) as unknown };
  } catch {
    return 'invalid_arguments';
  }
}
