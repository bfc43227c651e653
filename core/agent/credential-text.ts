/**
 * Text that looks like a credential, by simple well-known shapes: provider and platform keys, bearer
 * tokens, JSON web tokens, private key blocks, and the value of a `key=`/`token:`-style assignment.
 * Removing these lowers the chance that a secret a model repeated is shown; it is not a promise that
 * none is.
 */
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{30,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /(?<=\bBearer\s+)[A-Za-z0-9._~+/-]{16,}=*/gi,
  /(?<=(?:api[_-]?key|secret|token|password|passwd)["']?\s*[:=]\s*["']?)[^\s"']{8,}/gi,
];

export const REDACTED = '[redacted]';

/** `text` with every credential-looking part replaced by `[redacted]`, and whether anything was. */
export function redactCredentials(text: string): { text: string; removed: boolean } {
  let result = text;
  for (const shape of CREDENTIAL_SHAPES) result = result.replace(shape, REDACTED);
  return { text: result, removed: result !== text };
}
