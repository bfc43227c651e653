import type { ErrorCode } from '../errors.js';

/**
 * Encodes daemon-to-client frames. Results arrive already serialized (Fastify's response serializer
 * produced them), so a frame is assembled around them without parsing them again.
 */
export function encodeResult(id: string, instanceId: string, resultJson: string): string {
  return `{"type":"response","id":${JSON.stringify(id)},"instance_id":${JSON.stringify(instanceId)},"ok":true,"result":${resultJson}}\n`;
}

export function encodeError(id: string | null, instanceId: string, code: ErrorCode, message: string): string {
  return `${JSON.stringify({ type: 'response', id, instance_id: instanceId, ok: false, error: { code, message } })}\n`;
}

/** A refusal whose `{code, message}` object arrives already serialized. */
export function encodeSerializedError(id: string, instanceId: string, errorJson: string): string {
  return `{"type":"response","id":${JSON.stringify(id)},"instance_id":${JSON.stringify(instanceId)},"ok":false,"error":${errorJson}}\n`;
}

export interface EventFrame {
  event: string;
  session_id: string | null;
  operation_id: string | null;
  grant_generation: number | null;
  sequence: number | null;
  payload: Record<string, unknown>;
}

export function encodeEvent(frame: EventFrame): string {
  return `${JSON.stringify({ type: 'event', ...frame })}\n`;
}
