import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  errorResponse,
  Hold,
  type ScriptedCall,
  type ScriptedResponse,
  type Step,
  type TextOptions,
  type ToolCallOptions,
  textStream,
  toolCallStream,
} from './provider-streams.js';

export interface RecordedRequest {
  method: string;
  /** The path and query, e.g. `/v1/chat/completions`. */
  path: string;
  /** As Node reports them: names in lower case. */
  headers: IncomingHttpHeaders;
  /** The body's bytes as text, exactly as they arrived. */
  text: string;
  /** The body parsed as JSON, or null when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read the body's members freely
  body: any;
  /** Resolves if the client closes the connection before the scripted response has ended. */
  disconnected: Promise<void>;
}

interface Tap {
  teardown(fn: () => unknown): void;
}

/**
 * A real chat completions server on 127.0.0.1 that plays scripted responses in order, one per request,
 * and records every request it received. Closed with the test.
 */
export class ScriptedProvider {
  /** The base URL a provider is configured with: `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[] = [];
  /** Requests that found no scripted response (answered 400); a test expecting none checks this. */
  unexpected = 0;
  readonly #server: ReturnType<typeof createServer>;
  readonly #queue: ScriptedResponse[] = [];
  /** Answers of `GET /models`, played in order apart from the chat answers. */
  readonly #modelsQueue: ScriptedResponse[] = [];
  readonly #holds = new Set<Hold>();
  readonly #waiting: ((request: RecordedRequest) => void)[] = [];
  #delivered = 0;

  private constructor(server: ReturnType<typeof createServer>) {
    this.#server = server;
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }

  static async start(t: Tap): Promise<ScriptedProvider> {
    let provider: ScriptedProvider | undefined;
    const server = createServer((request, response) => void provider!.#answer(request, response));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    provider = new ScriptedProvider(server);
    t.teardown(() => provider.close());
    return provider;
  }

  /** Queues a text answer streamed in the given pieces. */
  reply(pieces: readonly string[], options?: TextOptions): this {
    return this.script(textStream(pieces, options));
  }

  /** Queues an answer that calls tools. */
  replyToolCalls(calls: readonly ScriptedCall[], options?: ToolCallOptions): this {
    return this.script(toolCallStream(calls, options));
  }

  /** Queues an HTTP error answer. */
  replyStatus(status: number, options?: { headers?: Record<string, string>; message?: string }): this {
    return this.script(errorResponse(status, options));
  }

  /** Queues any response. */
  script(response: ScriptedResponse): this {
    this.#queue.push(response);
    return this;
  }

  /** Queues an answer of `GET /models`: a JSON body (a listing, or anything a test needs) with a status. */
  replyModels(body: unknown, status = 200): this {
    return this.scriptModels({
      status,
      headers: { 'content-type': 'application/json' },
      steps: [{ kind: 'write', bytes: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)) }],
    });
  }

  /** Queues any answer of `GET /models`. */
  scriptModels(response: ScriptedResponse): this {
    this.#modelsQueue.push(response);
    return this;
  }

  /** A step that waits for `release()`; `reached` tells when the response got there. */
  hold(): Hold {
    const hold = new Hold();
    this.#holds.add(hold);
    return hold;
  }

  /** The next request not yet taken by `nextRequest`, as soon as it has arrived. */
  nextRequest(): Promise<RecordedRequest> {
    const request = this.requests[this.#delivered];
    if (request !== undefined) {
      this.#delivered++;
      return Promise.resolve(request);
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Queued responses no request has taken yet. */
  get pending(): number {
    return this.#queue.length;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    for (const hold of this.#holds) hold.release();
    if (this.#server.listening) {
      this.#server.close();
      await once(this.#server, 'close');
    }
  }

  async #answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const piece of request) chunks.push(piece as Buffer);
    let ended = false;
    let disconnect: () => void = () => {};
    const disconnected = new Promise<void>((resolve) => (disconnect = resolve));
    response.on('close', () => {
      if (!ended) disconnect();
    });
    const text = Buffer.concat(chunks).toString();
    const recorded: RecordedRequest = {
      method: request.method ?? '',
      path: request.url ?? '',
      headers: request.headers,
      text,
      body: parseJson(text),
      disconnected,
    };
    this.requests.push(recorded);
    const waiter = this.#waiting.shift();
    if (waiter) {
      this.#delivered++;
      waiter(recorded);
    }

    const listing = request.method === 'GET' && request.url?.endsWith('/models');
    const scripted = (listing ? this.#modelsQueue : this.#queue).shift();
    if (scripted === undefined) {
      this.unexpected++;
      ended = true;
      response.writeHead(400, { 'content-type': 'application/json', 'x-should-retry': 'false' });
      response.end('{"error":{"message":"no scripted response"}}');
      return;
    }
    response.socket?.setNoDelay(true);
    response.writeHead(scripted.status, scripted.headers);
    response.flushHeaders();
    for (const step of scripted.steps) {
      if (response.destroyed) return;
      if (!(await play(step, response))) return;
    }
    ended = true;
    response.end();
  }
}

/** Plays one step; false when the response is over (destroyed). */
async function play(step: Step, response: ServerResponse): Promise<boolean> {
  switch (step.kind) {
    case 'write':
      await new Promise<void>((resolve) => response.write(step.bytes, () => resolve()));
      // Let each write leave on its own rather than coalesce with the next.
      await new Promise((resolve) => setImmediate(resolve));
      return !response.destroyed;
    case 'pause':
      await new Promise((resolve) => setTimeout(resolve, step.ms));
      return !response.destroyed;
    case 'destroy':
      response.socket?.destroy();
      return false;
    case 'hold':
      step.arrive();
      await Promise.race([step.released, once(response, 'close')]);
      return !response.destroyed;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
