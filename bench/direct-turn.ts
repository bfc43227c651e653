import { createParser } from 'eventsource-parser';
import {
  BENCH_ANSWER,
  BENCH_MODEL,
  BENCH_TOOL_DESCRIPTION,
  BENCH_TOOL_NAME,
  lookup,
  TOOL_INPUT_SCHEMA,
  type TurnTiming,
} from './turn-fixture.js';

interface AssembledCall {
  id: string;
  name: string;
  arguments: string;
}

interface Round {
  text: string;
  calls: AssembledCall[];
}

interface Delta {
  content?: unknown;
  tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

const HEADERS = { 'content-type': 'application/json', accept: 'text/event-stream' };
const TOOLS = [
  {
    type: 'function',
    function: { name: BENCH_TOOL_NAME, description: BENCH_TOOL_DESCRIPTION, parameters: TOOL_INPUT_SCHEMA },
  },
];

/**
 * The baseline of the turn bench: what an application does without the daemon. Per turn it POSTs the
 * prompt with the tool to the provider with Node's `fetch` (as the daemon does), parses the event stream
 * with the same SSE parser the daemon uses, runs the tool itself, POSTs the continuation and reads the
 * answer, each body to its end so that the connection is kept for the next request.
 */
export class DirectLoop {
  readonly #url: string;

  constructor(baseUrl: string) {
    this.#url = `${baseUrl}/chat/completions`;
  }

  async turn(tag: string): Promise<TurnTiming> {
    const startedAt = process.hrtime.bigint();
    const user = { role: 'user', content: tag };
    const first = await this.#round([user]);
    const call = first.calls[0];
    if (first.calls.length !== 1 || call?.name !== BENCH_TOOL_NAME) {
      throw new Error(
        `the provider asked for ${first.calls.length} call(s) instead of one ${BENCH_TOOL_NAME}`,
      );
    }
    const toolStarted = process.hrtime.bigint();
    const content = JSON.stringify(lookup(JSON.parse(call.arguments)));
    const executorNs = Number(process.hrtime.bigint() - toolStarted);
    const second = await this.#round([
      user,
      {
        role: 'assistant',
        content: first.text,
        tool_calls: [
          { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
        ],
      },
      { role: 'tool', tool_call_id: call.id, content },
    ]);
    const endedAt = process.hrtime.bigint();
    if (second.text !== BENCH_ANSWER || second.calls.length !== 0) {
      throw new Error('the provider did not answer the continuation with its text');
    }
    return { tag, wallNs: Number(endedAt - startedAt), executorNs, endedAt };
  }

  async #round(messages: unknown[]): Promise<Round> {
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ model: BENCH_MODEL, messages, tools: TOOLS, stream: true }),
    });
    if (response.status !== 200 || response.body === null) {
      throw new Error(`the provider answered HTTP ${response.status}`);
    }
    const round: Round = { text: '', calls: [] };
    let done = false;
    const parser = createParser({
      onEvent: (message) => {
        if (done) return;
        if (message.data === '[DONE]') {
          done = true;
          return;
        }
        const data = JSON.parse(message.data) as { choices?: Array<{ delta?: Delta }> };
        const delta = data.choices?.[0]?.delta;
        if (!delta) return;
        if (typeof delta.content === 'string') round.text += delta.content;
        for (const part of delta.tool_calls ?? []) {
          round.calls[part.index ?? 0] ??= { id: '', name: '', arguments: '' };
          const assembled = round.calls[part.index ?? 0]!;
          if (part.id) assembled.id = part.id;
          if (part.function?.name) assembled.name = part.function.name;
          if (part.function?.arguments) assembled.arguments += part.function.arguments;
        }
      },
    });
    const decoder = new TextDecoder();
    for await (const bytes of response.body) parser.feed(decoder.decode(bytes, { stream: true }));
    if (!done) throw new Error('the event stream ended without [DONE]');
    return round;
  }
}
