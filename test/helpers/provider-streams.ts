/**
 * Streams a chat completions server sends, as steps the scripted provider plays: the standard shapes
 * and, in `QUIRKS`, each divergence that real servers show (see the provider streaming notes).
 */

/** A step that waits until the test releases it. */
export class Hold {
  readonly kind = 'hold';
  /** Resolves when the response got to the hold. */
  readonly reached: Promise<void>;
  readonly released: Promise<void>;
  #reach: () => void = () => {};
  #release: () => void = () => {};

  constructor() {
    this.reached = new Promise((resolve) => (this.#reach = resolve));
    this.released = new Promise((resolve) => (this.#release = resolve));
  }

  /** The server got here. */
  arrive(): void {
    this.#reach();
  }

  release(): void {
    this.#release();
  }
}

export type Step =
  | { kind: 'write'; bytes: Buffer }
  /** Real time between writes, only so that bytes arrive apart; nothing is timed by it. */
  | { kind: 'pause'; ms: number }
  /** The socket is destroyed: the client sees the connection break. */
  | { kind: 'destroy' }
  | Hold;

export interface ScriptedResponse {
  status: number;
  headers: Record<string, string>;
  steps: Step[];
}

export function raw(bytes: string | Buffer): Step {
  return { kind: 'write', bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes) };
}

/** One event: a JSON value as `data:`, or a string sent as the data as it is. */
export function sse(data: unknown): Step {
  return raw(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

export function done(): Step {
  return raw('data: [DONE]\n\n');
}

export function pause(ms: number): Step {
  return { kind: 'pause', ms };
}

export function destroy(): Step {
  return { kind: 'destroy' };
}

/** The bytes of `text`, written in pieces cut at the given byte offsets (inside characters too). */
export function cutAt(text: string, offsets: readonly number[]): Step[] {
  const bytes = Buffer.from(text);
  const cuts = [
    0,
    ...offsets.filter((at) => at > 0 && at < bytes.length).sort((a, b) => a - b),
    bytes.length,
  ];
  const steps: Step[] = [];
  for (let i = 1; i < cuts.length; i++) steps.push(raw(bytes.subarray(cuts[i - 1], cuts[i])));
  return steps;
}

export interface ChunkOptions {
  finishReason?: string | null;
  usage?: Record<string, number>;
}

/** A `chat.completion.chunk` with one choice. */
export function chunk(delta: Record<string, unknown>, options: ChunkOptions = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'scripted-model',
    choices: [{ index: 0, delta, finish_reason: options.finishReason ?? null }],
    ...(options.usage ? { usage: options.usage } : {}),
  };
}

/** The final chunk `stream_options.include_usage` asks for. */
export function usageChunk(usage: Record<string, number>): Record<string, unknown> {
  return { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', choices: [], usage };
}

export const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } as const;

export function stream(steps: Step[], status = 200): ScriptedResponse {
  return { status, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, steps };
}

export interface TextOptions {
  finishReason?: string;
  /** Adds the final usage chunk. */
  usage?: Record<string, number>;
}

/** The standard text answer: a role chunk, one chunk per piece, the finish, usage when asked, `[DONE]`. */
export function textStream(pieces: readonly string[], options: TextOptions = {}): ScriptedResponse {
  return stream([
    sse(chunk({ role: 'assistant', content: '' })),
    ...pieces.map((content) => sse(chunk({ content }))),
    sse(chunk({}, { finishReason: options.finishReason ?? 'stop' })),
    ...(options.usage ? [sse(usageChunk(options.usage))] : []),
    done(),
  ]);
}

export interface ScriptedCall {
  id: string;
  name: string;
  /** A JSON text; streamed in pieces of at most `fragment` characters. */
  arguments: string;
}

export interface ToolCallOptions extends TextOptions {
  /** Text the model writes before its calls. */
  text?: string;
  fragment?: number;
}

/**
 * The standard tool call answer: each call's first delta carries its index, id, type and name with
 * empty arguments; the arguments follow in fragments; the finish is `tool_calls`.
 */
export function toolCallStream(
  calls: readonly ScriptedCall[],
  options: ToolCallOptions = {},
): ScriptedResponse {
  const fragment = options.fragment ?? 4;
  const steps: Step[] = [sse(chunk({ role: 'assistant', content: options.text ?? null }))];
  calls.forEach((call, index) => {
    steps.push(
      sse(
        chunk({
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        }),
      ),
    );
    for (let at = 0; at < call.arguments.length; at += fragment) {
      const piece = call.arguments.slice(at, at + fragment);
      steps.push(sse(chunk({ tool_calls: [{ index, function: { arguments: piece } }] })));
    }
  });
  steps.push(sse(chunk({}, { finishReason: options.finishReason ?? 'tool_calls' })));
  if (options.usage) steps.push(sse(usageChunk(options.usage)));
  steps.push(done());
  return stream(steps);
}

/** An error status with a JSON error body (which the daemon must never repeat). */
export function errorResponse(
  status: number,
  options: { headers?: Record<string, string>; message?: string } = {},
): ScriptedResponse {
  return {
    status,
    headers: { 'content-type': 'application/json', ...options.headers },
    steps: [
      raw(JSON.stringify({ error: { message: options.message ?? 'scripted failure', type: 'error' } })),
    ],
  };
}

const WEATHER = '{"location": "Paris"}';
const WEATHER_TOKENS = ['{"', 'location', '":', ' "', 'Paris', '"}'];

/**
 * Every divergence of the notes as a ready-made response, each with what it must come to. The shapes
 * are those of the named servers; the calls are weather lookups so that expectations read alike.
 */
export const QUIRKS = {
  /**
   * llama-cpp-python 0.3.35 as measured: every delta repeats index 0, the id, type and name, and carries
   * the legacy `function_call`; arguments come one token per chunk, then an empty fragment; explicit
   * nulls; no usage; keep-alive comments.
   */
  llamaCppPythonToolCall: (id = 'call__0_get_weather_cmpl-8e3c5c1e-6a2b-4bd5-9e0a-2f1f6c1d9a77') =>
    stream([
      sse(chunk({ role: 'assistant', content: null, tool_calls: null, function_call: null })),
      raw(': ping - 2026-11-30 10:00:00.000000\n\n'),
      ...[...WEATHER_TOKENS, ''].map((token) =>
        sse(
          chunk({
            content: null,
            tool_calls: [
              { index: 0, id, type: 'function', function: { name: 'get_weather', arguments: token } },
            ],
            function_call: { name: 'get_weather', arguments: token },
          }),
        ),
      ),
      sse(
        chunk(
          { role: null, content: null, tool_calls: null, function_call: null },
          { finishReason: 'tool_calls' },
        ),
      ),
      done(),
    ]),

  /** Ollama: whole calls in one chunk each, index 0 reused for distinct calls, `reasoning` deltas. */
  ollamaParallelCalls: () =>
    stream([
      sse(chunk({ role: 'assistant', content: '', reasoning: 'Two cities.' })),
      sse(
        chunk({
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'call_a',
              index: 0,
              type: 'function',
              function: { name: 'get_weather', arguments: WEATHER },
            },
          ],
        }),
      ),
      sse(
        chunk({
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: 'call_b',
              index: 0,
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location": "Oslo"}' },
            },
          ],
        }),
      ),
      sse(chunk({ role: 'assistant', content: '' }, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** xAI / LM Studio: several whole calls in one chunk, without `index`. */
  wholeCallsWithoutIndex: () =>
    stream([
      sse(
        chunk({
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: WEATHER } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        }),
      ),
      sse(chunk({}, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** llama.cpp: `arguments` as an object rather than a JSON string. */
  objectArguments: () =>
    stream([
      sse(
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_o',
              type: 'function',
              function: { name: 'get_weather', arguments: { location: 'Paris' } },
            },
          ],
        }),
      ),
      sse(chunk({}, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** A `{}` placeholder, then the full JSON in the next delta. */
  placeholderArguments: () =>
    stream([
      sse(
        chunk({
          tool_calls: [
            { index: 0, id: 'call_p', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        }),
      ),
      sse(chunk({ tool_calls: [{ index: 0, function: { arguments: WEATHER } }] })),
      sse(chunk({}, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** No id at all: the daemon makes one up. */
  missingId: () =>
    stream([
      sse(
        chunk({ tool_calls: [{ index: 0, function: { name: 'get_weather', arguments: '{"location":' } }] }),
      ),
      sse(chunk({ tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] })),
      sse(chunk({}, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** The same id for two distinct calls, and a blank one for a third. */
  duplicateAndBlankIds: () =>
    stream([
      sse(
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_0',
              type: 'function',
              function: { name: 'get_weather', arguments: WEATHER },
            },
          ],
        }),
      ),
      sse(
        chunk({
          tool_calls: [
            { index: 1, id: 'call_0', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        }),
      ),
      sse(
        chunk({
          tool_calls: [
            { index: 2, id: '  ', type: 'function', function: { name: 'get_date', arguments: '{}' } },
          ],
        }),
      ),
      sse(chunk({}, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** The name after the first argument fragment, `""` names later, `type` missing then late. */
  lateNameAndType: () =>
    stream([
      sse(chunk({ tool_calls: [{ index: 0, id: 'call_l', function: { arguments: '{"location":' } }] })),
      sse(
        chunk({
          tool_calls: [
            { index: 0, type: 'function', function: { name: 'get_weather', arguments: ' "Paris"' } },
          ],
        }),
      ),
      sse(chunk({ tool_calls: [{ index: 0, function: { name: '', arguments: '}' } }] })),
      sse(chunk({}, { finishReason: 'tool_calls' })),
      done(),
    ]),

  /** `finish_reason: "stop"` although calls were made (OpenAI with a forced tool, Gemini's layer). */
  stopWithToolCalls: () =>
    stream([
      sse(
        chunk({
          tool_calls: [
            {
              index: 0,
              id: 'call_s',
              type: 'function',
              function: { name: 'get_weather', arguments: WEATHER },
            },
          ],
        }),
      ),
      sse(chunk({}, { finishReason: 'stop' })),
      done(),
    ]),

  /** DeepSeek / llama.cpp / older vLLM: `reasoning_content`; some servers send `reasoning` with it. */
  reasoningFields: () =>
    stream([
      sse(chunk({ role: 'assistant', reasoning_content: 'Think', reasoning: 'Think' })),
      sse(chunk({ reasoning_content: 'ing.' })),
      sse(chunk({ reasoning: ' More.' })),
      sse(chunk({ content: 'Answer.' })),
      sse(chunk({}, { finishReason: 'stop' })),
      done(),
    ]),

  /** `<think>` inside the content, its tags cut across chunks. */
  thinkTagsInContent: () =>
    stream([
      sse(chunk({ content: '<thi' })),
      sse(chunk({ content: 'nk>Plan it.</th' })),
      sse(chunk({ content: 'ink>Hello' })),
      sse(chunk({ content: ' <b>world</b>' })),
      sse(chunk({}, { finishReason: 'stop' })),
      done(),
    ]),

  /** Empty first chunks, null and unknown members. */
  emptyFirstChunks: () =>
    stream([
      sse({ id: 'x', object: 'chat.completion.chunk', choices: [] }),
      sse(chunk({ role: '', tool_calls: [] })),
      sse(chunk({ role: 'assistant', content: null, refusal: null, annotations: [] })),
      sse({ ...chunk({ content: 'Hi' }), system_fingerprint: 'fp_x', provider: 'somewhere' }),
      sse(chunk({}, { finishReason: 'stop' })),
      done(),
    ]),

  /** CRLF line ends, `: ping` comments, and an event whose data spans two lines. */
  crlfCommentsMultiline: () =>
    stream([
      raw(': ping\r\n\r\n'),
      raw(`data: ${JSON.stringify(chunk({ content: 'Hel' }))}\r\n\r\n`),
      raw(': keep-alive\r\n'),
      raw('data: {"choices":[{"index":0,\r\ndata: "delta":{"content":"lo"}}]}\r\n\r\n'),
      raw(`data: ${JSON.stringify(chunk({}, { finishReason: 'stop' }))}\r\n\r\n`),
      raw('data: [DONE]\r\n\r\n'),
    ]),

  /** The usage chunk `stream_options.include_usage` adds after the finish. */
  finalUsage: () => textStream(['Hi'], { usage: USAGE }),

  /** A finish but no `[DONE]` before the end of the body: a normal end. */
  noDone: () => stream([sse(chunk({ content: 'Hi' })), sse(chunk({}, { finishReason: 'stop' }))]),

  /** Neither a finish nor `[DONE]`: the body just ends (Ollama's `/v1` on an error). */
  truncated: () => stream([sse(chunk({ content: 'Hi' })), sse(chunk({ content: ' there' }))]),

  /** A 200 with no event at all (llama-cpp-python when the assistant `content` member is absent). */
  emptyBody: () => stream([]),

  /** After a 200, `data: {"error":…}` (OpenAI, vLLM, newer llama.cpp, OpenRouter). */
  inBandError: (message = 'scripted in-band failure') =>
    stream([sse(chunk({ content: 'Hi' })), sse({ error: { message, type: 'server_error', code: 500 } })]),

  /** OpenRouter's mid-stream error: an error member and `finish_reason: "error"`. */
  finishReasonError: () =>
    stream([
      sse(chunk({ content: 'Hi' })),
      sse({
        ...chunk({ content: '' }, { finishReason: 'error' }),
        error: { code: 502, message: 'upstream' },
      }),
    ]),

  /** An `event: error` event. */
  errorEvent: (message = 'scripted event failure') =>
    stream([raw(`event: error\ndata: ${JSON.stringify({ message })}\n\n`)]),

  /** Older llama.cpp: an `error:` field line. */
  errorField: (message = 'scripted field failure') =>
    stream([sse(chunk({ content: 'Hi' })), raw(`error: ${JSON.stringify({ message })}\n\n`)]),
} as const;
