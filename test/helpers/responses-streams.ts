/**
 * Streams of OpenAI's Responses API, shaped as its reference documents them ("Streaming events": each
 * event's `type`, `sequence_number`, `output_index`, `item_id`, `content_index` and `summary_index`; the
 * reasoning item with `encrypted_content` under `include: ["reasoning.encrypted_content"]`; the
 * `response.completed`, `response.incomplete` and `response.failed` events) and as the official SDK's
 * `ResponseStreamEvent` types spell them. Every event has an `event:` line equal to its data's `type`.
 */
import { raw, type ScriptedResponse, type Step, stream } from './provider-streams.js';

export const RESPONSE_ID = 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b';
export const RESPONSES_MODEL = 'o4-mini-2025-04-16';

/** Builds one stream's events, numbering them in order as the reference does. */
export class ResponsesStream {
  readonly #steps: Step[] = [];
  #sequence = 0;
  readonly #output: Record<string, unknown>[] = [];

  event(data: Record<string, unknown>): this {
    const event = { ...data, sequence_number: this.#sequence++ };
    this.#steps.push(raw(`event: ${String(data.type)}\ndata: ${JSON.stringify(event)}\n\n`));
    return this;
  }

  created(): this {
    this.event({ type: 'response.created', response: response('in_progress', []) });
    return this.event({ type: 'response.in_progress', response: response('in_progress', []) });
  }

  /** A reasoning item whose summary parts stream in pieces; it ends with its encrypted content. */
  reasoning(id: string, parts: readonly (readonly string[])[], encrypted: string): this {
    const output_index = this.#output.length;
    this.event({
      type: 'response.output_item.added',
      output_index,
      item: { id, type: 'reasoning', summary: [] },
    });
    const summary = parts.map((pieces, summary_index) => {
      const text = pieces.join('');
      const part = { type: 'summary_text', text: '' };
      this.event({
        type: 'response.reasoning_summary_part.added',
        item_id: id,
        output_index,
        summary_index,
        part,
      });
      for (const delta of pieces) {
        this.event({
          type: 'response.reasoning_summary_text.delta',
          item_id: id,
          output_index,
          summary_index,
          delta,
        });
      }
      this.event({
        type: 'response.reasoning_summary_text.done',
        item_id: id,
        output_index,
        summary_index,
        text,
      });
      this.event({
        type: 'response.reasoning_summary_part.done',
        item_id: id,
        output_index,
        summary_index,
        part: { type: 'summary_text', text },
      });
      return { type: 'summary_text', text };
    });
    const item = { id, type: 'reasoning', summary, encrypted_content: encrypted };
    this.#output.push(item);
    return this.event({ type: 'response.output_item.done', output_index, item });
  }

  /** An assistant message whose text streams in pieces. */
  message(id: string, pieces: readonly string[]): this {
    const output_index = this.#output.length;
    const text = pieces.join('');
    this.event({
      type: 'response.output_item.added',
      output_index,
      item: { id, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
    });
    const empty = { type: 'output_text', text: '', annotations: [] };
    this.event({
      type: 'response.content_part.added',
      item_id: id,
      output_index,
      content_index: 0,
      part: empty,
    });
    for (const delta of pieces) {
      this.event({ type: 'response.output_text.delta', item_id: id, output_index, content_index: 0, delta });
    }
    this.event({ type: 'response.output_text.done', item_id: id, output_index, content_index: 0, text });
    const part = { type: 'output_text', text, annotations: [] };
    this.event({ type: 'response.content_part.done', item_id: id, output_index, content_index: 0, part });
    const item = { id, type: 'message', status: 'completed', content: [part], role: 'assistant' };
    this.#output.push(item);
    return this.event({ type: 'response.output_item.done', output_index, item });
  }

  /** A function call whose arguments stream in fragments. */
  functionCall(id: string, callId: string, name: string, args: string, fragment = 8): this {
    const output_index = this.#output.length;
    const item = { id, type: 'function_call', status: 'in_progress', arguments: '', call_id: callId, name };
    this.event({ type: 'response.output_item.added', output_index, item });
    for (let at = 0; at < args.length; at += fragment) {
      const delta = args.slice(at, at + fragment);
      this.event({ type: 'response.function_call_arguments.delta', item_id: id, output_index, delta });
    }
    this.event({ type: 'response.function_call_arguments.done', item_id: id, output_index, arguments: args });
    const done = { ...item, status: 'completed', arguments: args };
    this.#output.push(done);
    return this.event({ type: 'response.output_item.done', output_index, item: done });
  }

  completed(): ScriptedResponse {
    const usage = { input_tokens: 36, input_tokens_details: { cached_tokens: 0 }, output_tokens: 87 };
    this.event({
      type: 'response.completed',
      response: { ...response('completed', this.#output), usage: { ...usage, total_tokens: 123 } },
    });
    return stream(this.#steps);
  }

  incomplete(reason: string): ScriptedResponse {
    this.event({
      type: 'response.incomplete',
      response: { ...response('incomplete', this.#output), incomplete_details: { reason } },
    });
    return stream(this.#steps);
  }

  /** The documented failure: status `failed` with its error. */
  failed(): ScriptedResponse {
    this.event({
      type: 'response.failed',
      response: {
        ...response('failed', this.#output),
        error: { code: 'server_error', message: 'The model failed to generate a response.' },
      },
    });
    return stream(this.#steps);
  }

  /** The steps so far, unfinished (a stream cut short). */
  cut(): ScriptedResponse {
    return stream(this.#steps);
  }
}

function response(status: string, output: Record<string, unknown>[]): Record<string, unknown> {
  return {
    id: RESPONSE_ID,
    object: 'response',
    created_at: 1_741_290_958,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: RESPONSES_MODEL,
    output: structuredClone(output),
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: null,
    user: null,
    metadata: {},
  };
}

/** The documented `error` event. */
export function responsesErrorEvent(): ScriptedResponse {
  return stream([
    raw(
      `event: error\ndata: ${JSON.stringify({ type: 'error', code: 'ERR_SOMETHING', message: 'Something went wrong', param: null, sequence_number: 1 })}\n\n`,
    ),
  ]);
}
