import type { DefinedTool } from './define-tool.js';
import { EventQueue } from './event-queue.js';
import type { ApplicationExecutor } from './executor.js';
import type { ResourceKind, ResourceSpec } from './resource-spec.js';
import { SessionControlEnded, TurnConnectionLost } from './session-errors.js';
import { turnsInHistory } from './turn-history.js';
import { selection } from './turn-selection.js';
import { operationId, typedCall } from './typed-call.js';
import { type Envelope, type EventFrame, WireCallError, type WireClient } from './wire-client.js';
import type {
  ClearResult,
  Descriptor,
  EvidenceResult,
  ListResult,
  RegisterResult,
  SessionClaimResult,
  SessionCloseResult,
  TerminalPayload,
  TurnEvent,
  TurnStartResult,
  UnregisterResult,
} from './wire-types.js';

export type { ResourceKind, ResourceSpec };
export { SessionControlEnded, TurnConnectionLost };

export interface TurnOptions {
  /** The executor of the registry's tools, attached to this session's connection. */
  executor?: ApplicationExecutor;
}

export interface RunOptions extends TurnOptions {
  /** Stops the turn (`turn.stop`) when aborted; `run` then resolves with its `cancelled` terminal. */
  signal?: AbortSignal;
}

/** A finished turn: its acceptance, its terminal (whatever its status) and the answer text. */
export interface TurnRun {
  accepted: TurnStartResult;
  terminal: TerminalPayload;
  /** The deltas, joined: the same as `terminal.assistant_text`, since no delta is ever dropped. */
  text: string;
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
  /** What waits on this session's events, told when control ends here. */
  readonly #followers = new Set<(ended: SessionControlEnded) => void>();

  /** The last `turn.terminal` of this session this connection received, for `terminal()`. */
  #lastTerminal: TerminalPayload | null;
  readonly #stopRecording: () => void;

  /**
   * `arrived`: the session's terminals received while the claim was being answered (see Session.claim).
   */
  constructor(client: WireClient, id: string, claim: SessionClaimResult, arrived: TerminalPayload[] = []) {
    const { control_token, ...rest } = claim;
    this.#client = client;
    this.id = id;
    this.#control = control_token;
    this.claim = rest;
    this.#lastTerminal = arrived.at(-1) ?? null;
    const stopEvents = client.onEvent((frame) => {
      if (frame.event === 'turn.terminal' && frame.session_id === id) {
        this.#lastTerminal = frame.payload as unknown as TerminalPayload;
      }
      if (revokes(frame, id, claim.grant_generation)) stop();
      return false;
    });
    const stopClose = client.onClose(() => stop());
    const stop = () => {
      stopEvents();
      stopClose();
    };
    this.#stopRecording = stop;
  }

  /**
   * Claims `sessionId` on `client`, making it the controller. A turn's terminal can reach the new
   * controller before the claim's answer has been read; it is kept, so `terminal()` still finds it.
   */
  static async claim(client: WireClient, sessionId: string): Promise<Session> {
    const arrived: TerminalPayload[] = [];
    const stop = client.onEvent((frame) => {
      if (frame.event === 'turn.terminal' && frame.session_id === sessionId) {
        arrived.push(frame.payload as unknown as TerminalPayload);
      }
      return false;
    });
    try {
      const claim = await typedCall<SessionClaimResult>(
        client,
        'session.claim',
        {},
        { session: sessionId, operation: operationId() },
      );
      return new Session(client, sessionId, claim, arrived);
    } finally {
      stop();
    }
  }

  /**
   * Registers a tool, or replaces the revision of the tool of that name: a `defineTool` result, or a spec
   * whose source holds the contract JSON.
   */
  registerTool(tool: ResourceSpec | DefinedTool): Promise<Descriptor> {
    return this.#register('tool', tool);
  }

  registerSkill(skill: ResourceSpec): Promise<Descriptor> {
    return this.#register('skill', skill);
  }

  /**
   * Removes the resource of that kind and name at its current revision. A name not registered is
   * WireCallError `resource_not_found`, as the daemon answers an absent resource.
   */
  async unregister(kind: ResourceKind, name: string): Promise<UnregisterResult> {
    const listing = await this.resources();
    const current = listing.entries.find((entry) => entry.kind === kind && entry.name === name);
    if (current === undefined) {
      throw new WireCallError('session.resources.unregister', 'resource_not_found');
    }
    return typedCall<UnregisterResult>(
      this.#client,
      'session.resources.unregister',
      { resource_id: current.resource_id, expected_revision: current.revision_id },
      this.#envelope(operationId()),
    );
  }

  unregisterTool(name: string): Promise<UnregisterResult> {
    return this.unregister('tool', name);
  }

  unregisterSkill(name: string): Promise<UnregisterResult> {
    return this.unregister('skill', name);
  }

  /** Removes every tool and skill of the registry. */
  async clear(): Promise<ClearResult> {
    const listing = await this.resources();
    return typedCall<ClearResult>(
      this.#client,
      'session.resources.clear',
      { expected_registry_revision: listing.registry_revision },
      this.#envelope(operationId()),
    );
  }

  resources(): Promise<ListResult> {
    return typedCall<ListResult>(this.#client, 'session.resources.list', {}, this.#envelope(null));
  }

  /**
   * Starts a turn over the whole current registry. With tools registered, `executor` must be attached
   * to this session's connection; its calls then go to it.
   */
  async startTurn(prompt: string, options: TurnOptions = {}): Promise<Turn> {
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

  /**
   * Runs a turn to its end: resolves with its terminal, whatever its status, and its text. Rejects when
   * the turn is refused (WireCallError), the connection drops (TurnConnectionLost) or control ends here
   * (SessionControlEnded); the turn itself goes on in the last two cases.
   */
  async run(prompt: string, options: RunOptions = {}): Promise<TurnRun> {
    const { signal, ...turnOptions } = options;
    signal?.throwIfAborted();
    const turn = await this.startTurn(prompt, turnOptions);
    const stop = () => {
      // A turn that already ended answers unknown_turn: its terminal is on its way regardless.
      this.stopTurn(turn.accepted.turn_id).catch(() => {});
    };
    // Aborted while the turn was being accepted: an abort event already fired does not fire again.
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    try {
      let text = '';
      for await (const event of turn.events) {
        if (event.event === 'turn.assistant_delta') text += event.payload.delta;
        if (event.event === 'turn.terminal')
          return { accepted: turn.accepted, terminal: event.payload, text };
      }
      throw new TurnConnectionLost();
    } finally {
      signal?.removeEventListener('abort', stop);
    }
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
   * The terminal of `turnId`: from the claim's snapshot, the last one this session received or the
   * session's durable history when the turn had already ended, else when its `turn.terminal` arrives. A
   * turn the daemon does not know rejects with the daemon's WireCallError (`unknown_turn`).
   */
  terminal(turnId: string): Promise<TerminalPayload> {
    for (const ended of [this.claim.snapshot.terminal, this.#lastTerminal]) {
      if (ended?.turn_id === turnId) return Promise.resolve(ended);
    }
    return new Promise((resolve, reject) => {
      const fail = (error: unknown) => {
        stop();
        reject(error);
      };
      const end = (terminal: TerminalPayload) => {
        stop();
        resolve(terminal);
      };
      const stopClose = this.#client.onClose(() => fail(new TurnConnectionLost()));
      const stopEvents = this.#client.onEvent((frame) => {
        if (revokes(frame, this.id, this.claim.grant_generation)) fail(new SessionControlEnded('takeover'));
        if (frame.event !== 'turn.terminal' || frame.payload.turn_id !== turnId) return false;
        end(frame.payload as unknown as TerminalPayload);
        return true;
      });
      this.#followers.add(fail);
      const stop = () => {
        stopEvents();
        stopClose();
        this.#followers.delete(fail);
      };
      // Asked once the terminal event is awaited: a turn that ends meanwhile is in one or the other.
      this.#recorded(turnId).then((terminal) => {
        if (terminal !== null) end(terminal);
      }, fail);
    });
  }

  /** Ends control without cancelling anything: a turn goes on, its events to the next controller. */
  async release(): Promise<void> {
    await typedCall(this.#client, 'session.release', {}, this.#envelope(operationId()));
    this.#controlEnded('released');
  }

  /**
   * Ends control and cancels the active turn, if any (`closing`; else `closed`). Its terminal reaches no
   * connection: a later claim sees it in `claim.snapshot.terminal`. The history stays.
   */
  async close(): Promise<SessionCloseResult> {
    const closed = await typedCall<SessionCloseResult>(
      this.#client,
      'session.close',
      {},
      this.#envelope(operationId()),
    );
    this.#controlEnded('closed');
    return closed;
  }

  /**
   * The terminal of `turnId` in the session's durable history; null while the turn runs. A turn the
   * history does not hold (or whose acceptance record is too large to replay) is asked of the daemon,
   * which refuses one it does not know.
   */
  async #recorded(turnId: string): Promise<TerminalPayload | null> {
    const history = await turnsInHistory(this.#client, this.id, new Set([turnId]));
    const terminal = history.terminals.get(turnId);
    if (terminal !== undefined) return terminal;
    if (!history.started.has(turnId)) await this.evidence(turnId);
    return null;
  }

  #controlEnded(reason: 'released' | 'closed'): void {
    this.#stopRecording();
    const ended = new SessionControlEnded(reason);
    for (const follower of [...this.#followers]) follower(ended);
  }

  async #register(kind: ResourceKind, spec: ResourceSpec): Promise<Descriptor> {
    // Exactly the wire's members: a defined tool carries its schemas and handler besides.
    const resource = { kind, name: spec.name, description: spec.description, source: spec.source };
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
    const fail = (error: Error) => {
      stop();
      events.fail(error);
    };
    const stopClose = this.#client.onClose(() => fail(new TurnConnectionLost()));
    const stopEvents = this.#client.onEvent((frame: EventFrame) => {
      if (revokes(frame, this.id, this.claim.grant_generation)) fail(new SessionControlEnded('takeover'));
      if (frame.session_id !== this.id || frame.operation_id !== operation) return false;
      events.push(frame as unknown as TurnEvent);
      if (frame.event === 'turn.terminal') {
        stop();
        events.end();
      }
      return true;
    });
    this.#followers.add(fail);
    const stop = () => {
      stopEvents();
      stopClose();
      this.#followers.delete(fail);
    };
    return { events, stop };
  }

  #envelope(operation: string | null): Envelope {
    return { session: this.id, control: this.#control, operation };
  }
}

/** Whether `frame` tells that another connection took over the control `generation` of the session. */
function revokes(frame: EventFrame, sessionId: string, generation: number): boolean {
  return (
    frame.event === 'session.control_revoked' &&
    frame.session_id === sessionId &&
    frame.payload.grant_generation === generation
  );
}
