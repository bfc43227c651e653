import { ERROR_MESSAGES, type ErrorCode, isWireError } from '../errors.js';

/** Terminal error codes of a failed turn; each carries its fixed text, never a provider's own words. */
export const TURN_FAILURE_CODES = [
  'provider_error',
  'tool_timeout',
  'executor_unavailable',
  'limit_exceeded',
  'interrupted',
  'storage_full',
  'internal_error',
] as const satisfies readonly ErrorCode[];

export type TurnFailureCode = (typeof TURN_FAILURE_CODES)[number];

export const TURN_STATUSES = ['completed', 'failed', 'cancelled'] as const;

export type TurnStatus = (typeof TURN_STATUSES)[number];

/** How a turn ends: thrown inside its worker, or decided from outside (stop, close, deadline). */
export class TurnEnding extends Error {
  readonly status: TurnStatus;
  readonly code: TurnFailureCode | null;

  constructor(status: TurnStatus, code: TurnFailureCode | null = null) {
    super(code ? ERROR_MESSAGES[code] : status);
    this.name = 'TurnEnding';
    this.status = status;
    this.code = code;
  }

  get error(): { code: TurnFailureCode; message: string } | null {
    return this.code ? { code: this.code, message: ERROR_MESSAGES[this.code] } : null;
  }
}

/** The failure a turn ends with when something of the daemon's own failed: a full disk says so. */
export function daemonFailure(error: unknown): TurnEnding {
  return new TurnEnding(
    'failed',
    isWireError(error) && error.code === 'storage_full' ? 'storage_full' : 'internal_error',
  );
}
