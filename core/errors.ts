/**
 * Every wire error code, once, with its default fixed message. Messages are constant text: they never
 * carry secrets, paths, source bodies or provider errors, so no message is ever built from input.
 */
export const ERROR_MESSAGES = {
  invalid_request: 'the request envelope is malformed',
  invalid_payload: 'the payload does not match the method schema',
  unknown_method: 'no such method on this connection',
  not_initialized: 'the connection is not initialized',
  already_initialized: 'the connection is already initialized',
  unsupported_wire_version: 'only wire 2 is supported',
  unsupported_capability: 'the capability is not supported',
  duplicate_request_id: 'the request id is already in flight',
  operation_already_known: 'the operation id is already retained',
  unauthorized: 'the control token does not authorize this request',
  unknown_session: 'no such session',
  session_busy: 'a turn is already active in the session',
  limit_exceeded: 'a limit would be exceeded',
  conflict: 'the request conflicts with the current state',
  resource_not_found: 'no such resource',
  configuration_busy: 'the capture worker is busy',
  stale_connection: 'the connection no longer holds this authority',
  unknown_turn: 'no such turn',
  provider_unavailable: 'no model provider is configured',
  provider_error: 'the model provider failed',
  auth_expired: 'the provider credential expired and cannot be refreshed',
  tool_timeout: 'an application tool call passed its timeout',
  executor_unavailable: 'the executor stayed away past the availability bound',
  interrupted: 'the daemon stopped while the turn was active',
  shutting_down: 'the daemon is shutting down',
  workspace_changed: 'the session workspace folder was moved, replaced or linked elsewhere',
  storage_full: 'the disk holding the daemon home is full',
  internal_error: 'internal error',
} as const;

export type ErrorCode = keyof typeof ERROR_MESSAGES;

export const ERROR_CODES = Object.keys(ERROR_MESSAGES) as ErrorCode[];

/** A refusal the client sees as `{ok:false, error:{code, message}}`. */
export class WireError extends Error {
  readonly code: ErrorCode;
  /** Fastify reads this to pick the reply's status; every refusal is a client error but `internal_error`. */
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string = ERROR_MESSAGES[code]) {
    super(message);
    this.name = 'WireError';
    this.code = code;
    this.statusCode = code === 'internal_error' ? 500 : 400;
  }

  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** `code` if it is a wire error code, else `internal_error`: for codes that crossed a thread boundary. */
export function knownErrorCode(code: string): ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'internal_error';
}

export function isWireError(value: unknown): value is WireError {
  return value instanceof WireError;
}
