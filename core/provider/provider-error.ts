/** Every way a provider round fails, once, with its fixed message. */
export const PROVIDER_FAILURES = {
  unreachable: 'the provider could not be reached',
  http_status: 'the provider answered with an HTTP error status',
  malformed_stream: 'the provider sent a stream that is not a chat completion stream',
  truncated: 'the provider stream ended before the answer was finished',
  in_band_error: 'the provider reported an error inside its stream',
  overloaded: 'the provider reported that it is overloaded',
  empty_response: 'the provider answered with an empty stream',
  too_large: 'the provider answer exceeds the daemon bounds',
  idle_timeout: 'the provider sent nothing for too long',
  deadline: 'the provider request took too long',
  cancelled: 'the provider request was cancelled',
  credential_expired: 'the provider credential expired and cannot be refreshed',
  malformed_listing: 'the provider sent a model list the daemon cannot read',
} as const;

export type ProviderFailure = keyof typeof PROVIDER_FAILURES;

/**
 * A failed provider round. It carries the kind and, for HTTP errors, the status code: never the
 * provider's own text, headers or body, which may quote the conversation or a key.
 */
export class ProviderError extends Error {
  readonly kind: ProviderFailure;
  /** The HTTP status of an `http_status` failure, else null. */
  readonly status: number | null;

  constructor(kind: ProviderFailure, status: number | null = null) {
    super(status === null ? PROVIDER_FAILURES[kind] : `${PROVIDER_FAILURES[kind]} (${status})`);
    this.name = 'ProviderError';
    this.kind = kind;
    this.status = status;
  }

  toJSON(): { kind: ProviderFailure; status: number | null } {
    return { kind: this.kind, status: this.status };
  }
}
