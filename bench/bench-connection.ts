import { connect, type Socket } from 'node:net';

interface ResponseLine {
  type?: unknown;
  id?: unknown;
  ok?: unknown;
  instance_id?: unknown;
  result?: unknown;
  error?: { code?: unknown };
}

type LineHandler = (frame: ResponseLine, text: string) => void;

/** One measured window: the latency of every request answered inside it. */
export interface RunSample {
  latenciesNs: Float64Array;
  seconds: number;
}

export interface RunOptions {
  /** Requests kept outstanding: 1 is ping-pong. */
  inFlight: number;
  warmupMs: number;
  measureMs: number;
}

const ID_PREFIX = 'c';
const REQUEST_HEAD = `{"type":"request","id":"${ID_PREFIX}`;
const REQUEST_TAIL =
  '","method":"capabilities","session_id":null,"control_token":null,"operation_id":null,"payload":{}}\n';
const STALL_MS = 10_000;
const INITIAL_LATENCY_SLOTS = 1 << 18;

/**
 * The bench client: one Unix socket connection that sends `capabilities` requests and matches the
 * responses by id. It builds request lines from two constant halves around a counter, keeps send
 * times in a ring indexed by that counter, and splits responses with a plain newline search, so
 * that the client's own cost stays small and identical for every server it measures.
 */
export class BenchConnection {
  readonly #socket: Socket;
  #pending: Buffer | null = null;
  #handler: LineHandler | null = null;
  #failure: ((error: Error) => void) | null = null;
  /** Why the connection broke while nothing waited on it: the next call fails with it at once. */
  #broken: Error | null = null;
  #nextId = 0;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('the server closed the connection')));
  }

  static open(socketPath: string): Promise<BenchConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(socketPath);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new BenchConnection(socket));
      });
    });
  }

  /** Sends one request line and resolves with its response frame and the exact line received. */
  call(method: string, payload: Record<string, unknown>): Promise<{ frame: ResponseLine; line: string }> {
    const id = `setup-${this.#nextId++}`;
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      this.#failure = reject;
      this.#handler = (frame, line) => {
        if (frame.id !== id) return this.#fail(new Error(`unexpected response id ${String(frame.id)}`));
        this.#handler = null;
        this.#failure = null;
        if (frame.ok !== true) reject(new Error(`${method} refused: ${String(frame.error?.code)}`));
        else resolve({ frame, line });
      };
      this.#socket.write(
        `${JSON.stringify({ type: 'request', id, method, session_id: null, control_token: null, operation_id: null, payload })}\n`,
      );
    });
  }

  initialize(): Promise<{ frame: ResponseLine; line: string }> {
    return this.call('initialize', {
      wire: 2,
      client: { name: 'magid-bench', version: '1' },
      requested_capabilities: ['application_resources_v1'],
    });
  }

  /** The bytes of one `capabilities` request as the bench sends it. */
  static get requestBytes(): number {
    return Buffer.byteLength(`${REQUEST_HEAD}0${REQUEST_TAIL}`);
  }

  /**
   * Keeps `inFlight` capabilities requests outstanding: after the warm-up, every response that
   * arrives inside the measured window records its latency. When the window ends no new request is
   * sent and the run resolves once the outstanding ones are answered.
   */
  run(options: RunOptions): Promise<RunSample> {
    if (this.#broken) return Promise.reject(this.#broken);
    const ringSize = 2 ** Math.ceil(Math.log2(options.inFlight * 2));
    const mask = ringSize - 1;
    const sentAt = new Array<bigint>(ringSize).fill(0n);
    let latencies = new Float64Array(INITIAL_LATENCY_SLOTS);
    let recorded = 0;
    let outstanding = 0;
    let next = 0;
    const start = process.hrtime.bigint();
    const measureFrom = start + BigInt(options.warmupMs) * 1_000_000n;
    const measureUntil = measureFrom + BigInt(options.measureMs) * 1_000_000n;
    let lastProgress = start;

    const sendUpTo = (count: number): void => {
      if (count === 0) return;
      const first = next;
      let batch = '';
      for (let i = 0; i < count; i++) batch += `${REQUEST_HEAD}${next++}${REQUEST_TAIL}`;
      const now = process.hrtime.bigint();
      for (let id = first; id < next; id++) sentAt[id & mask] = now;
      outstanding += count;
      this.#socket.write(batch);
    };

    return new Promise((resolve, reject) => {
      const watchdog = setInterval(() => {
        if (process.hrtime.bigint() - lastProgress > BigInt(STALL_MS) * 1_000_000n) {
          this.#fail(new Error(`no response for ${STALL_MS} ms`));
        }
      }, 1_000);
      const finish = (error: Error | null) => {
        clearInterval(watchdog);
        this.#afterChunk = () => {};
        this.#handler = null;
        this.#failure = null;
        if (error) reject(error);
        else resolve({ latenciesNs: latencies.subarray(0, recorded), seconds: options.measureMs / 1_000 });
      };
      this.#failure = finish;
      let toSend = 0;
      this.#handler = (frame) => {
        const id = frame.id;
        if (frame.ok !== true || typeof id !== 'string' || !id.startsWith(ID_PREFIX)) {
          return this.#fail(new Error(`unexpected response ${JSON.stringify(frame).slice(0, 200)}`));
        }
        const now = process.hrtime.bigint();
        lastProgress = now;
        outstanding--;
        if (now >= measureFrom && now < measureUntil) {
          if (recorded === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[recorded++] = Number(now - sentAt[Number(id.slice(ID_PREFIX.length)) & mask]!);
        }
        if (now < measureUntil) toSend++;
        else if (outstanding === 0) finish(null);
      };
      this.#afterChunk = () => {
        const count = toSend;
        toSend = 0;
        sendUpTo(count);
      };
      sendUpTo(options.inFlight);
    });
  }

  /** Runs after each received chunk's lines were handled: the run sends its refills in one write. */
  #afterChunk: () => void = () => {};

  close(): void {
    this.#failure = null;
    this.#handler = null;
    this.#socket.removeAllListeners('close');
    this.#socket.end();
  }

  #receive(chunk: Buffer): void {
    const bytes = this.#pending === null ? chunk : Buffer.concat([this.#pending, chunk]);
    let start = 0;
    for (let newline = bytes.indexOf(0x0a); newline !== -1; newline = bytes.indexOf(0x0a, start)) {
      if (newline > start) {
        const text = bytes.toString('utf8', start, newline);
        const handler = this.#handler;
        if (handler === null) {
          this.#fail(new Error('a response arrived that nothing waited for'));
          return;
        }
        handler(JSON.parse(text) as ResponseLine, text);
      }
      start = newline + 1;
    }
    this.#pending = start < bytes.length ? bytes.subarray(start) : null;
    this.#afterChunk();
  }

  #fail(error: Error): void {
    const failure = this.#failure;
    this.#failure = null;
    this.#handler = null;
    this.#socket.destroy();
    if (failure) failure(error);
    else this.#broken ??= error;
  }
}
