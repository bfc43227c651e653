import { fitTextInJson } from '../tool-results/fitted-json.js';
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
 * newlines, each other part a placeholder in its place, the whole at most `output_bytes` of UTF-8 as
 * encoded (the text cut between characters when it would not fit).
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
  return fitTextInJson(content, limit, (text, truncated) => ({ content: text, is_error, truncated })).json;
}
