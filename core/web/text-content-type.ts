import { TextDecoder } from 'node:util';

/** The text content types a fetch answers with, besides every `text/*` and `+json`/`+xml` suffix. */
const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/xhtml+xml',
  'application/javascript',
]);

/** A type and subtype of RFC 6838 restricted names, so what the output repeats is short and plain. */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

export interface TextContent {
  /** The media type as given to the model: the type and subtype, with the charset the text was decoded as. */
  contentType: string;
  decoder: TextDecoder;
}

/**
 * How to read an answer with this `content-type`, or null when it is not text. The text is decoded by the
 * `charset` parameter when TextDecoder knows it, else as UTF-8, with replacement characters for bytes that
 * do not decode.
 */
export function textContent(header: string | undefined): TextContent | null {
  if (header === undefined) return null;
  const [type = '', ...parameters] = header.split(';');
  const essence = type.trim().toLowerCase();
  if (!MEDIA_TYPE.test(essence) || !isText(essence)) return null;
  const decoder = decoderFor(charsetOf(parameters));
  return { contentType: `${essence}; charset=${decoder.encoding}`, decoder };
}

function isText(essence: string): boolean {
  return (
    essence.startsWith('text/') ||
    TEXT_TYPES.has(essence) ||
    essence.endsWith('+json') ||
    essence.endsWith('+xml')
  );
}

function charsetOf(parameters: string[]): string | null {
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals < 0 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') continue;
    return parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
  }
  return null;
}

function decoderFor(charset: string | null): TextDecoder {
  if (charset !== null) {
    try {
      return new TextDecoder(charset);
    } catch {
      // An encoding TextDecoder does not know is read as UTF-8.
    }
  }
  return new TextDecoder('utf-8');
}
