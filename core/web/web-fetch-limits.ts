/** The bounds of one web fetch, each overridable per fetcher except the URL length. */
export const WEB_FETCH_LIMITS = {
  /** The whole fetch, redirects included. */
  timeout_ms: 20_000,
  /** Bytes of the body read at most; the rest is not read. */
  download_bytes: 1_048_576,
  /**
   * UTF-8 bytes of the result given to the model, as compact JSON: the text is cut between characters until
   * the escaped whole fits, well within the built-in tools' output bound.
   */
  output_bytes: 16_384,
  max_redirects: 5,
  /** Characters of a URL, the one asked for and every redirect target. */
  url_chars: 2_048,
} as const;
