/** Every way a web fetch fails, once, with its fixed message: never the URL or anything a server sent. */
export const WEB_FETCH_MESSAGES = {
  invalid_url: 'the URL is not a valid absolute URL within the length limit',
  scheme_not_allowed: 'only http and https URLs can be fetched',
  credentials_in_url: 'a URL with a user name or password is not fetched',
  address_not_allowed: 'the host resolves to an address that is not allowed',
  unresolvable: 'the host name could not be resolved',
  unreachable: 'the server could not be reached or broke the connection',
  too_many_redirects: 'the server redirected too many times',
  http_status: 'the server answered with an HTTP error status',
  not_text: 'the server answered with content that is not text',
  timed_out: 'the fetch took too long',
  cancelled: 'the fetch was cancelled',
  internal_error: 'the fetch failed unexpectedly',
} as const;

export type WebFetchError = keyof typeof WEB_FETCH_MESSAGES;

export type WebFetchOutcome =
  | { ok: true; output: string }
  | { ok: false; code: WebFetchError; message: string };

export type WebFetchFailure = Extract<WebFetchOutcome, { ok: false }>;

export function webFetchFailure(code: WebFetchError): WebFetchFailure {
  return { ok: false, code, message: WEB_FETCH_MESSAGES[code] };
}
