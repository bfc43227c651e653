/** An HTTP token (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Headers the daemon sets itself or that frame the request; a configured one would break every request.
 * `authorization` and `x-api-key` are not among them: they may be configured when no key is, and a key
 * replaces them.
 */
const RESERVED_HEADERS = new Set([
  'accept',
  'connection',
  'content-length',
  'content-type',
  'expect',
  'host',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Why a provider's headers are refused: a message and the pointer it names. */
export interface HeaderNameProblem {
  message: string;
  pointer: string;
}

/**
 * The first problem of the header names of `headers` (found at `pointer`), or null. Checked before the
 * schema, whose messages name each member: a malformed name is reported without being repeated (it may
 * be a misplaced secret), a reserved one by its pointer.
 */
export function headerNameProblem(headers: unknown, pointer: string): HeaderNameProblem | null {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return null;
  for (const name of Object.keys(headers)) {
    if (!HEADER_NAME.test(name)) {
      return { message: `${pointer} has a name that is not an HTTP header name`, pointer };
    }
    if (RESERVED_HEADERS.has(name.toLowerCase())) {
      const at = `${pointer}/${name}`;
      return { message: `${at} is a header the daemon sets itself`, pointer: at };
    }
  }
  return null;
}
