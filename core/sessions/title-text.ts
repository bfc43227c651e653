import { TITLE_LIMITS } from '../limits.js';
import type { ConversationMessage } from '../provider/chat-provider.js';
import { cutUtf8 } from '../resources/unicode.js';

/** The fixed instruction of every title request. */
export const TITLE_INSTRUCTION =
  'Write a title for the conversation below: at most eight words, on one line, without quotes and ' +
  'without a final period. Answer with the title only.';

/** The one message of a title request: the session's first prompt and its answer, each cut to a bound. */
export function titleMessages(prompt: string, answer: string): ConversationMessage[] {
  const excerpt = (text: string) => cutUtf8(text, TITLE_LIMITS.excerpt_bytes);
  return [{ role: 'user', content: `Request:\n${excerpt(prompt)}\n\nAnswer:\n${excerpt(answer)}` }];
}

/** Quotes and emphasis models wrap a title in, and a `Title:` label they put before it. */
const WRAPPING = /^["'`*_“”‘’«»]+|["'`*_“”‘’«»]+$/g;
const LABEL = /^title\s*:\s*/i;

/**
 * The title a model's answer gives: its first nonblank line, without control characters, wrapping
 * quotes or a `Title:` label, spaces collapsed, cut between characters to TITLE_LIMITS.title_bytes and
 * trimmed. Null when nothing is left.
 */
export function boundedTitle(answer: string): string | null {
  const line = answer.split(/\r\n|\r|\n/).find((candidate) => candidate.trim() !== '') ?? '';
  const cleaned = line
    .replace(/\p{Cc}/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(LABEL, '')
    .replace(WRAPPING, '')
    .trim();
  const title = cutUtf8(cleaned, TITLE_LIMITS.title_bytes).trim();
  return title === '' ? null : title;
}
