/**
 * Streams of Anthropic's Messages API, shaped as its reference documents them ("Streaming messages":
 * the event flow, the thinking stream with `thinking_delta` and `signature_delta`, `ping`, the
 * `overloaded_error` event; "Handling stop reasons": `pause_turn`, `refusal`; "Errors": HTTP 529), and as
 * the official SDK's `RawMessageStreamEvent` types spell each event. Every event has an `event:` line
 * equal to its data's `type`.
 */
import { raw, type ScriptedResponse, type Step, stream } from './provider-streams.js';

export function messagesEvent(data: Record<string, unknown>): Step {
  return raw(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const MESSAGE_ID = 'msg_01XFDUDYJgAACzvnptvVoYEL';
export const MESSAGES_MODEL = 'claude-sonnet-4-5-20250929';

export function messageStart(): Step {
  return messagesEvent({
    type: 'message_start',
    message: {
      id: MESSAGE_ID,
      type: 'message',
      role: 'assistant',
      content: [],
      model: MESSAGES_MODEL,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 472, output_tokens: 2 },
    },
  });
}

export function ping(): Step {
  return messagesEvent({ type: 'ping' });
}

export function blockStart(index: number, block: Record<string, unknown>): Step {
  return messagesEvent({ type: 'content_block_start', index, content_block: block });
}

export function blockDelta(index: number, delta: Record<string, unknown>): Step {
  return messagesEvent({ type: 'content_block_delta', index, delta });
}

export function blockStop(index: number): Step {
  return messagesEvent({ type: 'content_block_stop', index });
}

export function messageEnd(stopReason: string, outputTokens = 89): Step[] {
  return [
    messagesEvent({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    messagesEvent({ type: 'message_stop' }),
  ];
}

/** A text block streamed in the given pieces. */
export function textBlock(index: number, pieces: readonly string[]): Step[] {
  return [
    blockStart(index, { type: 'text', text: '' }),
    ...pieces.map((text) => blockDelta(index, { type: 'text_delta', text })),
    blockStop(index),
  ];
}

/** A thinking block: its text in pieces, then its signature in one `signature_delta`, as documented. */
export function thinkingBlock(index: number, pieces: readonly string[], signature: string): Step[] {
  return [
    blockStart(index, { type: 'thinking', thinking: '', signature: '' }),
    ...pieces.map((thinking) => blockDelta(index, { type: 'thinking_delta', thinking })),
    blockDelta(index, { type: 'signature_delta', signature }),
    blockStop(index),
  ];
}

/** A tool_use block: `input: {}` at its start, then its input as `input_json_delta` fragments. */
export function toolUseBlock(index: number, id: string, name: string, input: string, fragment = 8): Step[] {
  const steps = [
    blockStart(index, { type: 'tool_use', id, name, input: {} }),
    blockDelta(index, { type: 'input_json_delta', partial_json: '' }),
  ];
  for (let at = 0; at < input.length; at += fragment) {
    steps.push(blockDelta(index, { type: 'input_json_delta', partial_json: input.slice(at, at + fragment) }));
  }
  steps.push(blockStop(index));
  return steps;
}

/** A whole text answer. */
export function messagesText(pieces: readonly string[], stopReason = 'end_turn'): ScriptedResponse {
  return stream([messageStart(), ...textBlock(0, pieces), ping(), ...messageEnd(stopReason)]);
}

/** An answer that calls tools, each in its own block, optionally after text. */
export function messagesToolUse(
  calls: readonly { id: string; name: string; input: string }[],
  options: { text?: string; thinking?: { pieces: string[]; signature: string } } = {},
): ScriptedResponse {
  const steps: Step[] = [messageStart()];
  let index = 0;
  if (options.thinking)
    steps.push(...thinkingBlock(index++, options.thinking.pieces, options.thinking.signature));
  if (options.text) steps.push(...textBlock(index++, [options.text]));
  for (const call of calls) steps.push(...toolUseBlock(index++, call.id, call.name, call.input));
  steps.push(...messageEnd('tool_use'));
  return stream(steps);
}

/** The documented in-stream error during high load. */
export function overloadedEvent(): ScriptedResponse {
  return stream([
    messagesEvent({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
  ]);
}

/** The documented HTTP 529 error body. */
export function overloaded529(): ScriptedResponse {
  return {
    status: 529,
    headers: { 'content-type': 'application/json' },
    steps: [
      raw(
        JSON.stringify({
          type: 'error',
          error: { type: 'overloaded_error', message: 'Overloaded' },
          request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
        }),
      ),
    ],
  };
}
