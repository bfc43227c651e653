import { connect, type Socket } from 'node:net';
import { isSameUser, peerCredentials } from '../core/endpoint/peer-credentials.js';
import { newId } from '../core/ids.js';
import { WIRE_LIMITS } from '../core/limits.js';
import type { EventFrame as DaemonEventFrame } from '../core/wire/frames.js';
import { LineSplitter } from '../core/wire/line-splitter.js';

export interface ResponseFrame {
  type: 'response';
  id: string | null;
  instance_id: string;
  ok: boolean;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
}

/** An event as it arrives: the daemon's event frame with its `type`. */
export type EventFrame = { type: 'event' } & DaemonEventFrame;

export interface Envelope {
  session?: string | null;
  control?: string | null;
  operation?: string | null;
  id?: string;
}

/** Sees every line a client writes and every frame line it reads, in order: for a log or a protocol check. */
export interface WireWatch {
  sent(line: string): void;
  received(line: string): void;
}

export interface WireClientOptions {
  keepHistory?: boolean;
  watch?: WireWatch;
}

/**
 * A refusal from the daemon: the method refused, the wire error code (docs/protocol.md section 5) and the
 * daemon's own message, which never carries secrets, paths or provider text.
 */
export class WireCallError extends Error {
  override readonly name = 'WireCallError';
  readonly method: string;
  readonly code: string;
  /** The daemon's message, or the library's reason for a refusal it decided itself (`another_home`). */
  readonly detail: string;
  constructor(method: string, code: string, detail = '') {
    super(detail === '' ? `${method}: ${code}` : `${method}: ${code}: ${detail}`);
    this.method = method;
    this.code = code;
    this.detail = detail;
  }

  /** The error for a refused response frame. */
  static of(method: string, frame: ResponseFrame): WireCallError {
    return new WireCallError(method, frame.error?.code ?? 'unknown', frame.error?.message ?? '');
  }
}

type Waiter<T> = {
  match: (frame: T) => boolean;
  resolve: (frame: T) => void;
  reject: (error: Error) => void;
};

/**
 * A wire v2 client over any byte transport: it writes request lines and sorts the frames it reads
 * into responses by id, id-less responses and events, each awaitable.
 */
export class WireClient {
  readonly #write: (line: string) => void;
  readonly #end: () => void;
  readonly #splitter = new LineSplitter(WIRE_LIMITS.frame_bytes * 4);
  readonly #responses = new Map<string, ResponseFrame>();
  readonly #nullResponses: ResponseFrame[] = [];
  readonly #events: EventFrame[] = [];
  #responseWaiters: Array<Waiter<ResponseFrame>> = [];
  #eventWaiters: Array<Waiter<EventFrame>> = [];
  readonly #eventListeners = new Set<(frame: EventFrame) => boolean>();
  readonly #closeListeners = new Set<() => void>();
  #closed = false;
  /** Every frame received, in order, for tests that check ordering or privacy. */
  readonly received: string[] = [];

  readonly #keepHistory: boolean;
  readonly #watch: WireWatch | null;

  /**
   * With `keepHistory` (the default), every frame received is kept in `received` and every event no
   * listener took is queued for `event()`, as tests want; a long-lived application turns it off so
   * that nothing grows without bound (then `event()` sees only events that arrive while it waits).
   */
  constructor(
    transport: { write: (line: string) => void; end: () => void },
    options: WireClientOptions = {},
  ) {
    this.#write = transport.write;
    this.#end = transport.end;
    this.#keepHistory = options.keepHistory ?? true;
    this.#watch = options.watch ?? null;
  }

  /** Feeds bytes read from the daemon. */
  receive(bytes: Buffer | string): void {
    for (const line of this.#splitter.push(typeof bytes === 'string' ? Buffer.from(bytes) : bytes)) {
      if (line.kind !== 'line') continue;
      const text = line.bytes.toString('utf8');
      if (this.#keepHistory) this.received.push(text);
      this.#watch?.received(text);
      const frame = JSON.parse(text) as ResponseFrame | EventFrame;
      if (frame.type === 'event') this.#deliverEvent(frame);
      else this.#deliverResponse(frame);
    }
  }

  /** The transport closed: every waiter fails. */
  closedByPeer(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const waiter of [...this.#responseWaiters, ...this.#eventWaiters]) {
      waiter.reject(new Error('connection closed'));
    }
    this.#responseWaiters = [];
    this.#eventWaiters = [];
    for (const listener of this.#closeListeners) listener();
  }

  /**
   * Offers every later event to `listener` before it is queued; an event the listener takes (returns
   * true for) is not queued. Returns the function that removes the listener.
   */
  onEvent(listener: (frame: EventFrame) => boolean): () => void {
    this.#eventListeners.add(listener);
    return () => this.#eventListeners.delete(listener);
  }

  /** Calls `listener` once the transport has closed. Returns the function that removes it. */
  onClose(listener: () => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  get closed(): boolean {
    return this.#closed;
  }

  sendRaw(text: string): void {
    this.#watch?.sent(text);
    this.#write(text);
  }

  send(method: string, payload: Record<string, unknown> = {}, envelope: Envelope = {}): string {
    const id = envelope.id ?? newId('r');
    const frame = {
      type: 'request',
      id,
      method,
      session_id: envelope.session ?? null,
      control_token: envelope.control ?? null,
      operation_id: envelope.operation ?? null,
      payload,
    };
    const line = `${JSON.stringify(frame)}\n`;
    this.#watch?.sent(line);
    this.#write(line);
    return id;
  }

  response(id: string, timeoutMs = 5000): Promise<ResponseFrame> {
    const ready = this.#responses.get(id);
    if (ready) {
      this.#responses.delete(id);
      return Promise.resolve(ready);
    }
    return this.#wait(this.#responseWaiters, (frame) => frame.id === id, timeoutMs, `response ${id}`);
  }

  nullResponse(timeoutMs = 5000): Promise<ResponseFrame> {
    const ready = this.#nullResponses.shift();
    if (ready) return Promise.resolve(ready);
    return this.#wait(this.#responseWaiters, (frame) => frame.id === null, timeoutMs, 'id-less response');
  }

  event(name: string, timeoutMs = 5000): Promise<EventFrame> {
    const index = this.#events.findIndex((frame) => frame.event === name);
    if (index !== -1) return Promise.resolve(this.#events.splice(index, 1)[0]!);
    return this.#wait(this.#eventWaiters, (frame) => frame.event === name, timeoutMs, `event ${name}`);
  }

  /** Events received and not yet awaited. */
  get pendingEvents(): readonly EventFrame[] {
    return this.#events;
  }

  request(
    method: string,
    payload: Record<string, unknown> = {},
    envelope: Envelope = {},
  ): Promise<ResponseFrame> {
    return this.response(this.send(method, payload, envelope));
  }

  /** The result of a successful call; a refusal throws WireCallError with its code. */
  async call(
    method: string,
    payload: Record<string, unknown> = {},
    envelope: Envelope = {},
  ): Promise<Record<string, unknown>> {
    const frame = await this.request(method, payload, envelope);
    if (!frame.ok) throw WireCallError.of(method, frame);
    return frame.result ?? {};
  }

  initialize(capabilities: string[] = ['application_resources_v1']): Promise<Record<string, unknown>> {
    return this.call('initialize', {
      wire: 2,
      client: { name: 'magi-client', version: '1' },
      requested_capabilities: capabilities,
    });
  }

  close(): void {
    this.#end();
  }

  #deliverResponse(frame: ResponseFrame): void {
    const waiter = this.#responseWaiters.find((w) => w.match(frame));
    if (waiter) {
      this.#responseWaiters = this.#responseWaiters.filter((w) => w !== waiter);
      waiter.resolve(frame);
    } else if (frame.id === null) this.#nullResponses.push(frame);
    else this.#responses.set(frame.id, frame);
  }

  #deliverEvent(frame: EventFrame): void {
    const waiter = this.#eventWaiters.find((w) => w.match(frame));
    if (waiter) {
      this.#eventWaiters = this.#eventWaiters.filter((w) => w !== waiter);
      waiter.resolve(frame);
      return;
    }
    for (const listener of this.#eventListeners) if (listener(frame)) return;
    if (this.#keepHistory) this.#events.push(frame);
  }

  #wait<T>(
    list: Array<Waiter<T>>,
    match: (frame: T) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<T> {
    if (this.#closed) return Promise.reject(new Error(`connection closed while waiting for ${what}`));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        const index = list.indexOf(waiter);
        if (index !== -1) list.splice(index, 1);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const waiter: Waiter<T> = {
        match,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      list.push(waiter);
    });
  }
}

/**
 * Connects to a daemon's socket. The daemon must run as this user: a peer of another uid is
 * refused before a byte is sent.
 */
export function connectSocket(
  path: string,
  options: WireClientOptions = {},
): Promise<{ client: WireClient; socket: Socket; daemonPid: number }> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      const credentials = peerCredentials(socket);
      if (!isSameUser(credentials)) {
        socket.destroy();
        reject(new Error('the daemon on this socket runs as another user'));
        return;
      }
      const client = new WireClient(
        { write: (line) => socket.write(line), end: () => socket.end() },
        options,
      );
      socket.on('data', (bytes: Buffer) => client.receive(bytes));
      socket.on('close', () => client.closedByPeer());
      socket.on('error', () => {});
      resolve({ client, socket, daemonPid: credentials.pid });
    });
  });
}
