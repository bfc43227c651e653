import type { Connection } from '../../core/connections/connection.js';
import type { RequestEnvelope } from '../../core/wire/envelope.js';

/**
 * The light request and response objects a frame is routed with. Fastify's router and lifecycle
 * (hooks, validation, serialization, error handling) run on them exactly as on HTTP messages, without
 * the cost of parsing or producing HTTP.
 */
export class FrameRequest {
  readonly method = 'POST';
  readonly url: string;
  readonly headers: Record<string, string> = {};
  readonly httpVersion = '1.1';
  readonly httpVersionMajor = 1;
  readonly envelope: RequestEnvelope;
  readonly connection: Connection;

  constructor(envelope: RequestEnvelope, connection: Connection) {
    this.url = `/${envelope.method}`;
    this.envelope = envelope;
    this.connection = connection;
  }

  on(): this {
    return this;
  }

  removeListener(): this {
    return this;
  }
}

type Listener = (error?: unknown) => void;

export class FrameResponse {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  readonly destroyed = false;
  readonly #headers: Record<string, unknown> = {};
  readonly #done: (statusCode: number, body: string) => void;
  #chunks: string[] = [];
  #finishListeners: Listener[] = [];

  constructor(done: (statusCode: number, body: string) => void) {
    this.#done = done;
  }

  setHeader(name: string, value: unknown): this {
    this.#headers[name.toLowerCase()] = value;
    return this;
  }

  getHeader(name: string): unknown {
    return this.#headers[name.toLowerCase()];
  }

  getHeaders(): Record<string, unknown> {
    return { ...this.#headers };
  }

  hasHeader(name: string): boolean {
    return name.toLowerCase() in this.#headers;
  }

  removeHeader(name: string): void {
    delete this.#headers[name.toLowerCase()];
  }

  writeHead(statusCode: number): this {
    this.statusCode = statusCode;
    this.headersSent = true;
    return this;
  }

  write(chunk: string | Buffer): boolean {
    this.#chunks.push(chunk.toString());
    return true;
  }

  end(chunk?: string | Buffer | null): this {
    if (this.writableEnded) return this;
    if (chunk != null) this.#chunks.push(chunk.toString());
    this.writableEnded = true;
    this.headersSent = true;
    const body = this.#chunks.length === 1 ? this.#chunks[0]! : this.#chunks.join('');
    this.#chunks = [];
    this.#done(this.statusCode, body);
    for (const listener of this.#finishListeners.splice(0)) listener();
    return this;
  }

  on(event: string, listener: Listener): this {
    if (event === 'finish') this.#finishListeners.push(listener);
    return this;
  }

  once(event: string, listener: Listener): this {
    return this.on(event, listener);
  }

  removeListener(event: string, listener: Listener): this {
    if (event === 'finish') this.#finishListeners = this.#finishListeners.filter((l) => l !== listener);
    return this;
  }

  destroy(): void {
    this.statusCode = 500;
    this.end('{"code":"internal_error","message":"internal error"}');
  }
}
