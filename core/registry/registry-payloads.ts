import { WireError } from '../errors.js';
import { isWireId } from '../ids.js';
import { parseResourceInput, type ResourceInput } from '../resources/resource-input.js';

/**
 * The payloads of the registry mutations, read strictly: exactly the named members, ids in the wire's id
 * alphabet. Every refusal is `invalid_payload`.
 */
export interface RegisterPayload {
  readonly expected_revision: string | null;
  readonly resource: ResourceInput;
}

export interface UnregisterPayload {
  readonly resource_id: string;
  readonly expected_revision: string;
}

export interface ClearPayload {
  readonly expected_registry_revision: string;
}

export const REGISTRY_PAYLOAD_REFUSALS = {
  register: 'the payload must be exactly {expected_revision, resource}',
  expected_revision: 'expected_revision must be null or an id',
  unregister: 'the payload must be exactly {resource_id, expected_revision} with ids',
  clear: 'the payload must be exactly {expected_registry_revision} with an id',
} as const;

type JsonObject = Record<string, unknown>;

function hasExactly(value: unknown, members: readonly string[]): value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === members.length && members.every((member) => Object.hasOwn(value, member));
}

function refuse(message: string): never {
  throw new WireError('invalid_payload', message);
}

export function parseRegisterPayload(value: unknown): RegisterPayload {
  if (!hasExactly(value, ['expected_revision', 'resource'])) refuse(REGISTRY_PAYLOAD_REFUSALS.register);
  const expected = value.expected_revision;
  if (expected !== null && !isWireId(expected)) refuse(REGISTRY_PAYLOAD_REFUSALS.expected_revision);
  return Object.freeze({ expected_revision: expected, resource: parseResourceInput(value.resource) });
}

export function parseUnregisterPayload(value: unknown): UnregisterPayload {
  if (
    !hasExactly(value, ['resource_id', 'expected_revision']) ||
    !isWireId(value.resource_id) ||
    !isWireId(value.expected_revision)
  ) {
    refuse(REGISTRY_PAYLOAD_REFUSALS.unregister);
  }
  return Object.freeze({ resource_id: value.resource_id, expected_revision: value.expected_revision });
}

export function parseClearPayload(value: unknown): ClearPayload {
  if (!hasExactly(value, ['expected_registry_revision']) || !isWireId(value.expected_registry_revision)) {
    refuse(REGISTRY_PAYLOAD_REFUSALS.clear);
  }
  return Object.freeze({ expected_registry_revision: value.expected_registry_revision });
}
