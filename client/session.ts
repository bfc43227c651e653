import { EventQueue } from './event-queue.js';
import type { ApplicationExecutor } from './executor.js';
import { operationId, typedCall } from './typed-call.js';
import type { Envelope, EventFrame, WireClient } from './wire-client.js';
import type {
  ApplicationSelection,
  Descriptor,
  EvidenceResult,
  ListResult,
  RegisterResult,
  ResourceSource,
  SessionClaimResult,
  TerminalPayload,
  TurnEvent,
  TurnStartResult,
} from './wire-types.js';

/** A tool or skill to register: a tool's source holds `{input_schema, output_schema, timeout_ms?}`. */
export interface ResourceSpec {
  name: string;
  description: string;
  source: ResourceSource;
}

/** The connection closed before the turn's terminal reached it; the turn itself goes on. */
export class TurnConnectionLost extends Error {
  override readonly name = 'TurnConnectionLost';
  constructor() {
    super('the connection closed before the turn ended; claim the session again to follow it');
  }
}

/** A started turn: its acceptance, and its events until its terminal. */
export interface Turn {
  readonly accepted: TurnStartResult;
  readonly events: AsyncIterable<TurnEvent>;
}

/** A session this connection controls: its registry and its turns. */
export class Session {
  readonly id: string;
  readonly #client: WireClient;
  readonly #control: string;
  readonly claim: Omit<SessionClaimResult, 'control_token'>;

  constructor(client: WireClient, id: string, claim: SessionClaimResult) {
    const { control_token, ...rest } = claim;
    this.#client = client;
    this.id = id;
    this.#control = control_token;
    this.claim = rest;
  }

  registerTool(tool: ResourceSpec): Promise<Descriptor> {
    return this.#register({ kind: 'tool', ...tool });
  }

  registerSkill(skill: ResourceSpec): Promise<Descriptor> {
    return this.#register({ kind: 'skill', ...skill });
  }

  resources(): Promise<ListResult> {
    return typedCall<ListResult>(this.#client, 'session.resources.list', {}, this.#envelope(null));
  }

  /**
   * Starts a turn over the whole current registry. With tools registered, `executor` must be attached
   * to this session's connection; its calls then go to it.
   */
  async startTurn(prompt: string, options: { executor?: ApplicationExecutor } = {}): Promise<Turn> {
    const listing = await this.resources();
    const payload =
      listing.entries.length > 0 ? { prompt, application: selection(listing, options.executor) } : { prompt };
    const operation = operationId();
    const { events, stop } = this.#follow(operation);
    let accepted: TurnStartResult;
    try {
      accepted = await typedCall<TurnStartResult>(
        this.#client,
        'turn.start',
        payload,
        this.#envelope(operation),
      );
    } catch (error) {
      stop();
      throw error;
    }
    // Kept with the executor, so that an application that restarts can claim it and read its outcome.
    await options.executor?.keepTurn(this.id, accepted.turn_id);
    return { accepted, events };
  }

  /** Cancels the active turn; its terminal (`cancelled`) follows on the events. */
  async stopTurn(turnId: string): Promise<void> {
    await typedCall(this.#client, 'turn.stop', { turn_id: turnId }, this.#envelope(operationId()));
  }

  /** What happened to each application call of a turn (see docs/protocol.md, reconnect evidence). */
  evidence(turnId: string): Promise<EvidenceResult> {
    return typedCall<EvidenceResult>(
      this.#client,
      'turn.application_evidence',
      { turn_id: turnId },
      this.#envelope(null),
    );
  }

  /**
   * The terminal of `turnId`: from the claim's snapshot when the turn had already ended, else when its
   * `turn.terminal` arrives. For a session claimed again after a drop.
   */
  terminal(turnId: string): Promise<TerminalPayload> {
    const ended = this.claim.snapshot.terminal as TerminalPayload | null;
    if (ended?.turn_id === turnId) return Promise.resolve(ended);
    return new Promise((resolve, reject) => {
      const stopClose = this.#client.onClose(() => reject(new TurnConnectionLost()));
      const stop = this.#client.onEvent((frame) => {
        if (frame.event !== 'turn.terminal' || frame.payload.turn_id !== turnId) return false;
        stop();
        stopClose();
        resolve(frame.payload as unknown as TerminalPayload);
        return true;
      });
    });
  }

  /** Ends control without cancelling anything. */
  async release(): Promise<void> {
    await typedCall(this.#client, 'session.release', {}, this.#envelope(operationId()));
  }

  async #register(resource: ResourceSpec & { kind: 'tool' | 'skill' }): Promise<Descriptor> {
    const registered = await typedCall<RegisterResult>(
      this.#client,
      'session.resources.register',
      { expected_revision: await this.#currentRevision(resource), resource },
      this.#envelope(operationId()),
    );
    return registered.entry;
  }

  /** The revision a registration must name: that of the same kind and name, to replace it, or null. */
  async #currentRevision(resource: { kind: string; name: string }): Promise<string | null> {
    const listing = await this.resources();
    const current = listing.entries.find(
      (entry) => entry.kind === resource.kind && entry.name === resource.name,
    );
    return current?.revision_id ?? null;
  }

  /**
   * Collects the events of the turn `operation` starts (they carry its operation id) until its terminal,
   * or until the connection closes.
   */
  #follow(operation: string): { events: EventQueue<TurnEvent>; stop: () => void } {
    const events = new EventQueue<TurnEvent>();
    const stopClose = this.#client.onClose(() => events.fail(new TurnConnectionLost()));
    const stopEvents = this.#client.onEvent((frame: EventFrame) => {
      if (frame.session_id !== this.id || frame.operation_id !== operation) return false;
      events.push(frame as unknown as TurnEvent);
      if (frame.event === 'turn.terminal') {
        stop();
        events.end();
      }
      return true;
    });
    const stop = () => {
      stopEvents();
      stopClose();
    };
    return { events, stop };
  }

  #envelope(operation: string | null): Envelope {
    return { session: this.id, control: this.#control, operation };
  }
}

/** The `application` member selecting the whole current registry, with `executor` for its tools. */
function selection(listing: ListResult, executor: ApplicationExecutor | undefined): ApplicationSelection {
  const tools = listing.entries.filter((entry) => entry.kind === 'tool');
  return {
    expected_registry_revision: listing.registry_revision,
    executor_id: tools.length > 0 ? (executor?.id ?? null) : null,
    executor_generation: tools.length > 0 ? (executor?.generation ?? null) : null,
    tool_authorizations: tools.map(({ resource_id, revision_id, revision_sha256 }) => ({
      resource_id,
      revision_id,
      revision_sha256,
    })),
  };
}
