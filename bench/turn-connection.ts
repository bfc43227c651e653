import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import {
  BENCH_ANSWER,
  BENCH_TOOL_DESCRIPTION,
  BENCH_TOOL_NAME,
  lookup,
  TOOL_CONTRACT,
  type TurnTiming,
} from './turn-fixture.js';

interface Frame {
  type?: unknown;
  id?: unknown;
  ok?: unknown;
  result?: Record<string, unknown>;
  error?: { code?: unknown };
  event?: unknown;
  payload?: Record<string, unknown>;
}

/** Events a turn sends that the bench has no use for. */
const QUIET_EVENTS = new Set(['turn.started', 'turn.assistant_delta', 'turn.activity']);

interface Envelope {
  session?: string | null;
  control?: string | null;
  /** A mutation: the request gets a fresh operation id. */
  mutation?: boolean;
}

interface OpenTurn {
  tag: string;
  startedAt: bigint;
  executorNs: number;
  calls: number;
  resolve: (timing: TurnTiming) => void;
  reject: (error: Error) => void;
}

/** A refusal, named by its wire error code. */
export class RefusedError extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
  ) {
    super(`${method} refused: ${code}`);
  }
}

/**
 * One application of the turn bench on its own Unix socket connection: it controls its own session
 * and holds its own executor on the same connection, with the `lookup` tool registered, and runs one
 * turn at a time, answering each `turn.application_tool_call` at once with a success `{}`. Lines are
 * split with a plain newline search and each parsed once, so that the client's own cost stays small
 * (client/wire-client.ts keeps every frame it receives and searches the events nobody awaited,
 * which would grow with every turn of a run).
 */
export class TurnConnection {
  readonly #socket: Socket;
  readonly #prefix = randomBytes(6).toString('hex');
  readonly #responses = new Map<string, (frame: Frame | Error) => void>();
  #pending: Buffer | null = null;
  #nextId = 0;
  #turn: OpenTurn | null = null;
  #broken: Error | null = null;
  #session = '';
  #control = '';
  #application: Record<string, unknown> = {};

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(new Error('the daemon closed the connection')));
  }

  static open(socketPath: string): Promise<TurnConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(socketPath);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new TurnConnection(socket));
      });
    });
  }

  /**
   * initialize with the profile, session.create and session.claim, executor.create and executor.confirm
   * on this connection, the tool registered inline, and the registry listed for the turns' `application`.
   */
  async setUp(workspace: string): Promise<void> {
    await this.call('initialize', {
      wire: 2,
      client: { name: 'magid-bench', version: '1' },
      requested_capabilities: ['application_resources_v1'],
    });
    // Titled, so the measured turns are not joined by the title request of a session's first turn.
    const created = await this.call('session.create', { workspace, title: 'bench' }, { mutation: true });
    this.#session = created.session_id as string;
    const claimed = await this.call('session.claim', {}, { session: this.#session, mutation: true });
    this.#control = claimed.control_token as string;
    const executor = await this.call('executor.create', {}, { mutation: true });
    await this.call(
      'executor.confirm',
      { executor_id: executor.executor_id, resume_secret: executor.resume_secret },
      { mutation: true },
    );
    const controlled = { session: this.#session, control: this.#control };
    const registered = await this.call(
      'session.resources.register',
      {
        expected_revision: null,
        resource: {
          kind: 'tool',
          name: BENCH_TOOL_NAME,
          description: BENCH_TOOL_DESCRIPTION,
          source: { kind: 'inline', content: TOOL_CONTRACT },
        },
      },
      { ...controlled, mutation: true },
    );
    const listing = await this.call('session.resources.list', {}, controlled);
    const entry = registered.entry as Record<string, unknown>;
    this.#application = {
      expected_registry_revision: listing.registry_revision,
      executor_id: executor.executor_id,
      executor_generation: executor.executor_generation,
      tool_authorizations: [
        {
          resource_id: entry.resource_id,
          revision_id: entry.revision_id,
          revision_sha256: entry.revision_sha256,
        },
      ],
    };
  }

  /**
   * Leaves nothing behind that counts against the daemon's bounds: the registry cleared, the session
   * released (an empty registry goes with its control), the executor released.
   */
  async tearDown(): Promise<void> {
    const controlled = { session: this.#session, control: this.#control, mutation: true };
    await this.call(
      'session.resources.clear',
      { expected_registry_revision: this.#application.expected_registry_revision },
      controlled,
    );
    await this.call('session.release', {}, controlled);
    await this.call(
      'executor.release',
      {
        executor_id: this.#application.executor_id,
        executor_generation: this.#application.executor_generation,
      },
      { mutation: true },
    );
  }

  /** Sends one request and resolves with its result; a refusal rejects with its code. */
  call(
    method: string,
    payload: Record<string, unknown>,
    envelope: Envelope = {},
  ): Promise<Record<string, unknown>> {
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise((resolve, reject) => {
      const id = this.#send(method, payload, envelope);
      this.#responses.set(id, (frame) => {
        if (frame instanceof Error) reject(frame);
        else if (frame.ok === true) resolve(frame.result ?? {});
        else reject(new RefusedError(method, String(frame.error?.code)));
      });
    });
  }

  /**
   * One turn whose prompt is `tag`: turn.start with the application, the tool call answered at once,
   * and the terminal, which must be `completed` with the provider's answer after exactly one call.
   */
  turn(tag: string): Promise<TurnTiming> {
    if (this.#broken) return Promise.reject(this.#broken);
    if (this.#turn) return Promise.reject(new Error('a turn is already running on this connection'));
    return new Promise((resolve, reject) => {
      const startedAt = process.hrtime.bigint();
      this.#turn = { tag, startedAt, executorNs: 0, calls: 0, resolve, reject };
      const id = this.#send(
        'turn.start',
        { prompt: tag, application: this.#application },
        { session: this.#session, control: this.#control, mutation: true },
      );
      this.#responses.set(id, (frame) => {
        if (!(frame instanceof Error) && frame.ok !== true) {
          this.#endTurn(new RefusedError('turn.start', String(frame.error?.code)));
        }
      });
    });
  }

  close(): void {
    this.#responses.clear();
    this.#socket.removeAllListeners('close');
    this.#socket.end();
  }

  #send(method: string, payload: Record<string, unknown>, envelope: Envelope): string {
    const id = `${this.#prefix}-${this.#nextId++}`;
    this.#socket.write(
      `${JSON.stringify({
        type: 'request',
        id,
        method,
        session_id: envelope.session ?? null,
        control_token: envelope.control ?? null,
        operation_id: envelope.mutation ? `op-${id}` : null,
        payload,
      })}\n`,
    );
    return id;
  }

  #receive(chunk: Buffer): void {
    const bytes = this.#pending === null ? chunk : Buffer.concat([this.#pending, chunk]);
    let start = 0;
    for (let newline = bytes.indexOf(0x0a); newline !== -1; newline = bytes.indexOf(0x0a, start)) {
      if (newline > start) this.#frame(JSON.parse(bytes.toString('utf8', start, newline)) as Frame);
      start = newline + 1;
    }
    this.#pending = start < bytes.length ? bytes.subarray(start) : null;
  }

  #frame(frame: Frame): void {
    if (frame.type === 'response') {
      const handler = this.#responses.get(String(frame.id));
      if (handler) {
        this.#responses.delete(String(frame.id));
        handler(frame);
      } else this.#fail(new Error(`a response nothing waited for: ${String(frame.id)}`));
    } else if (frame.event === 'turn.application_tool_call') this.#toolCall(frame.payload ?? {});
    else if (frame.event === 'turn.terminal') this.#terminal(frame.payload ?? {});
    else if (!QUIET_EVENTS.has(String(frame.event))) {
      this.#fail(new Error(`unexpected event ${String(frame.event)}`));
    }
  }

  /** The executor's side: runs the tool and sends its result at once. */
  #toolCall(payload: Record<string, unknown>): void {
    const received = process.hrtime.bigint();
    const turn = this.#turn;
    if (!turn) {
      this.#fail(new Error('a tool call arrived outside a turn'));
      return;
    }
    turn.calls++;
    const value = lookup(payload.arguments);
    const id = this.#send(
      'turn.application_tool_result',
      {
        turn_id: payload.turn_id,
        call_id: payload.call_id,
        executor_id: payload.executor_id,
        executor_generation: payload.executor_generation,
        resource_id: payload.resource_id,
        revision_id: payload.revision_id,
        revision_sha256: payload.revision_sha256,
        outcome: { status: 'success', value },
      },
      { session: this.#session, mutation: true },
    );
    turn.executorNs += Number(process.hrtime.bigint() - received);
    this.#responses.set(id, (response) => {
      if (!(response instanceof Error) && response.ok !== true) {
        this.#endTurn(new RefusedError('turn.application_tool_result', String(response.error?.code)));
      }
    });
  }

  #terminal(payload: Record<string, unknown>): void {
    const endedAt = process.hrtime.bigint();
    const turn = this.#turn;
    if (!turn) {
      this.#fail(new Error('a terminal arrived outside a turn'));
      return;
    }
    if (payload.status !== 'completed' || payload.assistant_text !== BENCH_ANSWER || turn.calls !== 1) {
      const error = payload.error as { code?: unknown } | null;
      const why = error ? ` (${String(error.code)})` : '';
      this.#endTurn(new Error(`turn ended ${String(payload.status)}${why} after ${turn.calls} call(s)`));
      return;
    }
    this.#turn = null;
    turn.resolve({
      tag: turn.tag,
      wallNs: Number(endedAt - turn.startedAt),
      executorNs: turn.executorNs,
      endedAt,
    });
  }

  #endTurn(error: Error): void {
    const turn = this.#turn;
    this.#turn = null;
    turn?.reject(error);
  }

  #fail(error: Error): void {
    this.#broken ??= error;
    this.#socket.destroy();
    for (const handler of this.#responses.values()) handler(error);
    this.#responses.clear();
    this.#endTurn(error);
  }
}
