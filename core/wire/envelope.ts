import { isUtf8 } from 'node:buffer';
import type { ErrorCode } from '../errors.js';
import { isWireId } from '../ids.js';
import { exceedsJsonDepth } from '../json-depth.js';
import { SERVICE_LIMITS, WIRE_LIMITS } from '../limits.js';

/** A request as wire-v2 section 2 defines it, after its envelope was checked. */
export interface RequestEnvelope {
  id: string;
  method: string;
  session_id: string | null;
  control_token: string | null;
  operation_id: string | null;
  payload: Record<string, unknown>;
}

export type DecodedLine =
  | { kind: 'object'; value: Record<string, unknown>; safeId: string | null }
  /** An object nested past the frame's depth bound: only its id is read, for the refusal. */
  | { kind: 'too_deep'; safeId: string | null }
  | { kind: 'invalid' };

/** Decodes one line as a JSON object, noting its id when that id is a safe wire id. */
export function decodeLine(bytes: Buffer): DecodedLine {
  if (!isUtf8(bytes)) return { kind: 'invalid' };
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid' };
  }
  if (!isPlainObject(value)) return { kind: 'invalid' };
  const safeId = isWireId(value.id) ? value.id : null;
  if (exceedsJsonDepth(text, SERVICE_LIMITS.frame_nesting_depth)) return { kind: 'too_deep', safeId };
  return { kind: 'object', value, safeId };
}

const MEMBERS = new Set(['type', 'id', 'method', 'session_id', 'control_token', 'operation_id', 'payload']);
const METHOD_NAME = /^[a-z][a-z_.]{0,127}$/;

/** Checks the seven members of a request envelope; the payload limit is checked here too. */
export function checkEnvelope(value: Record<string, unknown>): RequestEnvelope | ErrorCode {
  const keys = Object.keys(value);
  if (keys.length !== MEMBERS.size || !keys.every((key) => MEMBERS.has(key))) return 'invalid_request';
  if (value.type !== 'request' || !isWireId(value.id)) return 'invalid_request';
  if (typeof value.method !== 'string' || !METHOD_NAME.test(value.method)) return 'invalid_request';
  for (const member of ['session_id', 'control_token', 'operation_id'] as const) {
    if (value[member] !== null && !isWireId(value[member])) return 'invalid_request';
  }
  if (!isPlainObject(value.payload)) return 'invalid_request';
  if (Buffer.byteLength(JSON.stringify(value.payload)) > WIRE_LIMITS.payload_bytes) return 'limit_exceeded';
  return value as unknown as RequestEnvelope;
}

/** How a method uses one of the three nullable envelope members. */
export type MemberRule = 'required' | 'null' | 'optional';

export interface EnvelopeRules {
  session: MemberRule;
  control: MemberRule;
  operation: MemberRule;
}

/** True when the envelope's nullable members are set exactly as the method requires. */
export function envelopeFits(envelope: RequestEnvelope, rules: EnvelopeRules): boolean {
  return (
    fits(envelope.session_id, rules.session) &&
    fits(envelope.control_token, rules.control) &&
    fits(envelope.operation_id, rules.operation)
  );
}

function fits(value: string | null, rule: MemberRule): boolean {
  if (rule === 'optional') return true;
  return rule === 'required' ? value !== null : value === null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
