import { MCP_LIMITS } from './mcp-limits.js';

/** The part of a `tools/call` result the model is shown. */
export interface CallResultContent {
  content: ReadonlyArray<{ type: string; text?: unknown }>;
  isError?: boolean | undefined;
}

/** Content other than text is never sent on; the model is told it was there. */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  image: '[image]',
  audio: '[audio]',
  resource: '[resource]',
  resource_link: '[resource_link]',
};

/**
 * The compact JSON a call answers with: `{"content","is_error","truncated"}`, the text parts joined by
 * newlines, each other part a placeholder in its place, the whole at most `output_bytes` of UTF-8.
 */
export function callOutput(result: CallResultContent, limit: number = MCP_LIMITS.output_bytes): string {
  const content = result.content
    .map((part) =>
      part.type === 'text' && typeof part.text === 'string'
        ? part.text
        : (PLACEHOLDERS[part.type] ?? '[content]'),
    )
    .join('\n');
  const is_error = result.isError === true;
  // Through UTF-8 and back: a lone surrogate (JSON can carry one) reaches the model as U+FFFD.
  const whole = Buffer.from(content, 'utf8').toString('utf8');
  const complete = JSON.stringify({ content: whole, is_error, truncated: false });
  if (Buffer.byteLength(complete, 'utf8') <= limit) return complete;
  const frame = Buffer.byteLength(JSON.stringify({ content: '', is_error, truncated: true }), 'utf8');
  // JSON escapes each character on its own, so the longest beginning that fits is found character by
  // character; the walk stops at the bound, however long the text.
  let room = limit - frame;
  let end = 0;
  for (const character of whole) {
    const size = Buffer.byteLength(JSON.stringify(character), 'utf8') - 2;
    if (size > room) break;
    room -= size;
    end += character.length;
  }
  return JSON.stringify({ content: whole.slice(0, end), is_error, truncated: true });
}
