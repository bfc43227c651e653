import { cutUtf8 } from '../resources/unicode.js';
import type { McpServerConfig } from './mcp-types.js';

/** What a secret is replaced by. */
export const REDACTED = '[redacted]';

/** Values shorter than this are too common to be secrets and would blank out ordinary words. */
const SECRET_MIN_CHARACTERS = 6;

/** An `Authorization` scheme's token, wherever the server wrote it: the scheme is kept. */
const SCHEME_TOKEN = /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi;

/**
 * Keys of well-known services by their shapes, wherever the server found them: OpenAI, Anthropic and
 * Stripe (`sk-`, `pk_`, `rk_`), GitHub, GitLab, Slack, Notion, Google and AWS.
 */
const KEY_SHAPES = [
  /\b(sk|pk|rk)[-_][A-Za-z0-9_-]{16,}/g,
  /\b(ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs]|ntn|secret)[-_][A-Za-z0-9_-]{16,}/g,
  /\bAIza[A-Za-z0-9_-]{30,}/g,
  /\bAKIA[A-Z0-9]{16}\b/g,
];

// biome-ignore lint/suspicious/noControlCharactersInRegex: an escape sequence begins with ESC.
const ANSI_ESCAPE = /\u001b\[[0-?]*[ -/]*[@-~]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;

/**
 * Makes what a server wrote (a JSON-RPC error's message, a stderr line) fit to be shown: the values of
 * its configured `env` (of 6 characters or more), its headers and the secrets of its URL replaced by
 * `[redacted]`, and so any token shaped like a credential.
 */
export class ServerText {
  readonly #secrets: string[];

  constructor(config: McpServerConfig) {
    this.#secrets = [...new Set(secretsOf(config))]
      .filter((secret) => secret.length >= SECRET_MIN_CHARACTERS)
      .sort((a, b) => b.length - a.length);
  }

  /** `text` with every secret replaced. */
  readonly redact = (text: string): string => {
    let redacted = text;
    for (const secret of this.#secrets) redacted = redacted.split(secret).join(REDACTED);
    redacted = redacted.replace(SCHEME_TOKEN, (_token, scheme: string) => `${scheme} ${REDACTED}`);
    for (const shape of KEY_SHAPES) redacted = redacted.replace(shape, REDACTED);
    return redacted;
  };

  /**
   * One line of `text`, redacted, without escape sequences or control characters (each run of them and of
   * spaces one space), cut between characters to at most `maxBytes` of UTF-8 (ending in `…` when cut).
   */
  line(text: string, maxBytes: number): string {
    const plain = this.redact(text)
      .replace(ANSI_ESCAPE, '')
      .replace(CONTROL, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    const cut = cutUtf8(plain, maxBytes);
    return cut === plain ? plain : `${cutUtf8(plain, maxBytes - 3)}…`;
  }
}

/** Every value of the configuration that may be a secret: `env` values, headers, the URL's password and query. */
function secretsOf(config: McpServerConfig): string[] {
  if (config.type === 'stdio') return Object.values(config.env);
  const secrets: string[] = [];
  for (const value of Object.values(config.headers)) secrets.push(value, ...value.split(/\s+/));
  try {
    const url = new URL(config.url);
    secrets.push(decodeURIComponent(url.password), url.password);
    for (const value of url.searchParams.values()) secrets.push(value, encodeURIComponent(value));
  } catch {
    // An entry's URL is checked when it is read; nothing to add from one that does not parse.
  }
  return secrets;
}
