import { text } from 'node:stream/consumers';
import { WIRE_LIMITS } from '../../core/limits.js';
import { UsageError } from './exec-errors.js';

export interface PromptInput {
  /** The prompt argument: absent, `-`, or the prompt itself. */
  argument: string | undefined;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/**
 * The turn's prompt: the argument, or standard input when the argument is `-` or absent and stdin is not a
 * terminal. With both (`git diff | magid exec "review this"`), stdin is read to its end and follows the
 * argument after a blank line, as context.
 */
export async function readPrompt({ argument, stdin }: PromptInput): Promise<string> {
  const fromArgument = argument === undefined || argument === '-' ? null : argument;
  const piped = stdin.isTTY !== true;
  if (fromArgument === null && !piped) {
    throw new UsageError('no prompt: give one as an argument, or pipe it on standard input');
  }
  const context = piped ? await text(stdin) : '';
  const prompt =
    fromArgument === null ? context : context.trim() === '' ? fromArgument : `${fromArgument}\n\n${context}`;
  if (prompt.trim() === '') throw new UsageError('the prompt is empty');
  const encoded = Buffer.byteLength(JSON.stringify({ prompt }));
  if (encoded > WIRE_LIMITS.payload_bytes) {
    throw new UsageError(
      `the prompt is too long: ${encoded} bytes encoded, a request takes at most ${WIRE_LIMITS.payload_bytes}`,
    );
  }
  return prompt;
}

/** A session title from the prompt's first line, so the daemon need not ask the model for one. */
export function titleOf(prompt: string): string {
  const line = prompt.trim().split('\n', 1)[0]!.trim();
  const characters = [...line];
  return characters.length <= 80 ? line : `${characters.slice(0, 79).join('')}…`;
}
