import { connectSocket, type EventFrame, type WireClient } from '../client/wire-client.js';
import {
  BENCH_ANSWER,
  BENCH_TOOL_DESCRIPTION,
  BENCH_TOOL_NAME,
  lookup,
  TOOL_CONTRACT,
} from './turn-fixture.js';

/**
 * Methods a client recovers with: sent by right, they have their session's or executor's slot beyond the
 * operation table (docs/protocol.md section 6).
 */
export const RECOVERY_METHODS = new Set([
  'turn.stop',
  'session.close',
  'session.claim',
  'session.release',
  'executor.resume',
  'executor.confirm',
  'executor.release',
  'turn.application_tool_result',
]);

/** Each turn, stop or reconnect must be over within this, on a machine the bench keeps busy. */
const WAIT_MS = 60_000;
/** Events an actor keeps until a step of its awaits them; the rest are dropped as they come. */
const KEPT_EVENTS = new Set(['turn.terminal', 'turn.application_tool_call', 'turn.assistant_delta']);
const KEPT_EVENTS_MAX = 256;

export type TurnKind = 'plain' | 'builtin' | 'app';

/** Every mutation the bench sends, counted by method and by answer ('ok' or the refusal's code). */
export class Tally {
  mutations = 0;
  readonly answers = new Map<string, Map<string, number>>();
  /** Turns that ended as the bench wanted, by kind ('stopped' for the cancelled slow ones). */
  readonly turns = new Map<string, number>();
  /** What went wrong that is not a refusal: a turn that ended otherwise, a missing event. */
  readonly failures: string[] = [];

  answered(method: string, code: string): void {
    const byCode = this.answers.get(method) ?? new Map<string, number>();
    byCode.set(code, (byCode.get(code) ?? 0) + 1);
    this.answers.set(method, byCode);
  }

  turnEnded(kind: string): void {
    this.turns.set(kind, (this.turns.get(kind) ?? 0) + 1);
  }

  failed(what: string): void {
    if (this.failures.length < 20) this.failures.push(what);
  }
}

/** A refusal of a mutation the bench needed. */
export class Refused extends Error {
  constructor(
    readonly method: string,
    readonly code: string,
  ) {
    super(`${method} refused: ${code}`);
  }
}

let operations = 0;
const operationPrefix = `op-${process.pid}-${Date.now().toString(36)}`;
const freshOperation = () => `${operationPrefix}-${operations++}`;

/** One connection of the bench: its requests, its mutations tallied, the events its steps wait for. */
export class BenchClient {
  readonly #client: WireClient;
  readonly #tally: Tally;
  readonly #kept: EventFrame[] = [];
  readonly #waiting: Array<{ match: (frame: EventFrame) => boolean; resolve: (frame: EventFrame) => void }> =
    [];

  private constructor(client: WireClient, tally: Tally) {
    this.#client = client;
    this.#tally = tally;
    client.onEvent((frame) => {
      const index = this.#waiting.findIndex((waiter) => waiter.match(frame));
      if (index !== -1) this.#waiting.splice(index, 1)[0]!.resolve(frame);
      else if (KEPT_EVENTS.has(frame.event)) {
        this.#kept.push(frame);
        if (this.#kept.length > KEPT_EVENTS_MAX) this.#kept.shift();
      }
      return true;
    });
  }

  static async open(socketPath: string, tally: Tally, profile: boolean): Promise<BenchClient> {
    const { client } = await connectSocket(socketPath, { keepHistory: false });
    await client.initialize(profile ? ['application_resources_v1'] : []);
    return new BenchClient(client, tally);
  }

  /** A read; a refusal throws. */
  async read(method: string, envelope: { session?: string; control?: string } = {}) {
    const answer = await this.#client.request(method, {}, envelope);
    if (!answer.ok) throw new Refused(method, String(answer.error?.code));
    return answer.result ?? {};
  }

  /** A mutation with a fresh operation id, tallied; a refusal throws. */
  async mutate(
    method: string,
    payload: Record<string, unknown>,
    envelope: { session?: string; control?: string } = {},
  ): Promise<Record<string, unknown>> {
    this.#tally.mutations++;
    const answer = await this.#client.response(
      this.#client.send(method, payload, { ...envelope, operation: freshOperation() }),
      WAIT_MS,
    );
    const code = answer.ok ? 'ok' : String(answer.error?.code);
    this.#tally.answered(method, code);
    if (!answer.ok) throw new Refused(method, code);
    return answer.result ?? {};
  }

  /** The next event `match` accepts, kept or still to come. */
  event(match: (frame: EventFrame) => boolean, what: string): Promise<EventFrame> {
    const index = this.#kept.findIndex(match);
    if (index !== -1) return Promise.resolve(this.#kept.splice(index, 1)[0]!);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (frame: EventFrame) => {
          clearTimeout(timer);
          resolve(frame);
        },
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
        reject(new Error(`no ${what} within ${WAIT_MS} ms`));
      }, WAIT_MS);
      this.#waiting.push(waiter);
    });
  }

  close(): void {
    this.#client.close();
  }
}

const forTurn = (event: string, turnId: unknown) => (frame: EventFrame) =>
  frame.event === event && frame.payload.turn_id === turnId;

/**
 * An application's session on a connection of its own, as section 6 of the protocol describes one: it
 * runs turns one at a time and, between them, the recoveries a client goes through (a stopped turn, a
 * dropped connection and a claim, a release or a close and a claim). With `profile`, it holds an executor
 * on the same connection and the bench's tool, and its turns call the tool; a dropped connection then
 * resumes the executor first. Steps of one session never overlap: `exclusive` runs them in turn.
 */
export class SessionActor {
  readonly #socketPath: string;
  readonly #tally: Tally;
  readonly #profile: boolean;
  #client!: BenchClient;
  #session = '';
  #control = '';
  #executor = { executor_id: '', executor_generation: 0, resume_secret: '' };
  #application: Record<string, unknown> = {};
  #queue: Promise<unknown> = Promise.resolve();

  constructor(socketPath: string, tally: Tally, profile: boolean) {
    this.#socketPath = socketPath;
    this.#tally = tally;
    this.#profile = profile;
  }

  /** Runs `step` once the session's earlier steps are done. */
  exclusive<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step);
    this.#queue = run.catch(() => {});
    return run;
  }

  async open(workspace: string): Promise<void> {
    this.#client = await BenchClient.open(this.#socketPath, this.#tally, this.#profile);
    // Titled, so that no title request joins the turns.
    const created = await this.#client.mutate('session.create', { workspace, title: 'bench' });
    this.#session = created.session_id as string;
    await this.#claim();
    if (!this.#profile) return;
    await this.#newExecutor();
    const registered = await this.#client.mutate(
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
      this.#controlled(),
    );
    const entry = registered.entry as Record<string, unknown>;
    this.#application.expected_registry_revision = registered.registry_revision;
    this.#application.tool_authorizations = [
      {
        resource_id: entry.resource_id,
        revision_id: entry.revision_id,
        revision_sha256: entry.revision_sha256,
      },
    ];
  }

  /** One turn of `kind` that must complete with the provider's answer. */
  async turn(kind: TurnKind): Promise<void> {
    const payload: Record<string, unknown> = { prompt: `${kind} turn` };
    if (kind === 'app') payload.application = this.#application;
    const accepted = await this.#client.mutate('turn.start', payload, this.#controlled());
    if (kind === 'app') {
      const call = await this.#client.event(
        forTurn('turn.application_tool_call', accepted.turn_id),
        'tool call',
      );
      const { payload: dispatched } = call;
      await this.#client.mutate(
        'turn.application_tool_result',
        {
          turn_id: dispatched.turn_id,
          call_id: dispatched.call_id,
          executor_id: this.#executor.executor_id,
          executor_generation: this.#executor.executor_generation,
          resource_id: dispatched.resource_id,
          revision_id: dispatched.revision_id,
          revision_sha256: dispatched.revision_sha256,
          outcome: { status: 'success', value: lookup(dispatched.arguments) },
        },
        { session: this.#session },
      );
    }
    const terminal = await this.#client.event(forTurn('turn.terminal', accepted.turn_id), 'terminal');
    if (terminal.payload.status === 'completed' && terminal.payload.assistant_text === BENCH_ANSWER) {
      this.#tally.turnEnded(kind);
    } else this.#tally.failed(`a ${kind} turn ended ${String(terminal.payload.status)}`);
  }

  /** A turn the provider keeps running, stopped once its first text has come. */
  async stoppedTurn(): Promise<void> {
    const payload: Record<string, unknown> = { prompt: 'slow turn' };
    if (this.#profile) payload.application = this.#application;
    const accepted = await this.#client.mutate('turn.start', payload, this.#controlled());
    await this.#client.event(forTurn('turn.assistant_delta', accepted.turn_id), 'first delta');
    await this.#client.mutate('turn.stop', { turn_id: accepted.turn_id }, this.#controlled());
    const terminal = await this.#client.event(forTurn('turn.terminal', accepted.turn_id), 'terminal');
    if (terminal.payload.status === 'cancelled') this.#tally.turnEnded('stopped');
    else this.#tally.failed(`a stopped turn ended ${String(terminal.payload.status)}`);
  }

  /** The connection drops; a new one resumes the executor (with the profile) and claims the session. */
  async reconnect(): Promise<void> {
    this.#client.close();
    this.#client = await BenchClient.open(this.#socketPath, this.#tally, this.#profile);
    if (this.#profile) {
      const resumed = await this.#client.mutate('executor.resume', {
        executor_id: this.#executor.executor_id,
        resume_secret: this.#executor.resume_secret,
      });
      this.#useExecutor({ ...this.#executor, executor_generation: resumed.executor_generation as number });
    }
    await this.#claim();
  }

  /** Control released, then claimed again. */
  async releaseAndClaim(): Promise<void> {
    await this.#client.mutate('session.release', {}, this.#controlled());
    await this.#claim();
  }

  /** The session closed, then claimed again. */
  async closeAndClaim(): Promise<void> {
    await this.#client.mutate('session.close', {}, this.#controlled());
    await this.#claim();
  }

  /** With the profile: the executor released and a new one created and confirmed. */
  async replaceExecutor(): Promise<void> {
    if (!this.#profile) return this.releaseAndClaim();
    await this.#client.mutate('executor.release', {
      executor_id: this.#executor.executor_id,
      executor_generation: this.#executor.executor_generation,
    });
    await this.#newExecutor();
  }

  close(): void {
    this.#client?.close();
  }

  async #claim(): Promise<void> {
    const claimed = await this.#client.mutate('session.claim', {}, { session: this.#session });
    this.#control = claimed.control_token as string;
  }

  async #newExecutor(): Promise<void> {
    const created = await this.#client.mutate('executor.create', {});
    await this.#client.mutate('executor.confirm', {
      executor_id: created.executor_id,
      resume_secret: created.resume_secret,
    });
    this.#useExecutor({
      executor_id: created.executor_id as string,
      executor_generation: created.executor_generation as number,
      resume_secret: created.resume_secret as string,
    });
  }

  #useExecutor(executor: { executor_id: string; executor_generation: number; resume_secret: string }): void {
    this.#executor = executor;
    this.#application.executor_id = executor.executor_id;
    this.#application.executor_generation = executor.executor_generation;
  }

  #controlled(): { session: string; control: string } {
    return { session: this.#session, control: this.#control };
  }
}

/**
 * Mutations that only take room in the operation table: rotations of an executor of its own, whose
 * outcomes are retained as any other's, sent as fast as they are asked for.
 */
export class RotatingClient {
  readonly #client: BenchClient;
  readonly #executor: { executor_id: string; executor_generation: number };
  #unanswered = 0;

  private constructor(client: BenchClient, executor: { executor_id: string; executor_generation: number }) {
    this.#client = client;
    this.#executor = executor;
  }

  static async open(socketPath: string, tally: Tally): Promise<RotatingClient> {
    const client = await BenchClient.open(socketPath, tally, true);
    const created = await client.mutate('executor.create', {});
    await client.mutate('executor.confirm', {
      executor_id: created.executor_id,
      resume_secret: created.resume_secret,
    });
    return new RotatingClient(client, {
      executor_id: created.executor_id as string,
      executor_generation: created.executor_generation as number,
    });
  }

  get unanswered(): number {
    return this.#unanswered;
  }

  /** One rotation, not awaited by the caller; its answer is tallied. */
  rotate(): void {
    this.#unanswered++;
    this.#client
      .mutate('executor.rotate', this.#executor)
      .catch(() => {})
      .finally(() => this.#unanswered--);
  }

  close(): void {
    this.#client.close();
  }
}
