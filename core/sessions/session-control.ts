import type { Clock } from '../clock.js';
import type { HiddenPlaces } from '../confinement/hidden-places.js';
import type { Connection } from '../connections/connection.js';
import { WireError } from '../errors.js';
import { matchesVerifier, verifierOf } from '../hashing.js';
import type { HistoryStore } from '../history/history-store.js';
import { newId, newSecret } from '../ids.js';
import type { CheckedWorkspace } from './workspace.js';
import { WorkspacePins } from './workspace-pins.js';

/** Proof that a request carries the session's current control. */
export interface Grant {
  sessionId: string;
  connection: Connection;
  generation: number;
}

export interface ClaimSnapshot {
  turn: Record<string, unknown> | null;
  terminal: Record<string, unknown> | null;
}

interface Controller {
  connection: Connection;
  verifier: Buffer;
  generation: number;
}

interface LiveSession {
  controller: Controller | null;
  /** The token that closed the session, which may repeat its close and nothing else. */
  closedBy: { connection: Connection; verifier: Buffer } | null;
}

export interface SessionControlOptions {
  history: HistoryStore;
  clock: Clock;
  /** Tells a superseded controller that its control was taken over. */
  revoked: (connection: Connection, sessionId: string, generation: number) => void;
  /** What no tool may read, for the workspaces' pins. */
  hidden: HiddenPlaces;
  /** The claim snapshot of a session's active turn and last terminal, as the connection may see them. */
  snapshot?: (sessionId: string, connection: Connection) => ClaimSnapshot;
}

/**
 * Who controls which session. Control is live state: a fresh unpredictable token per claim, kept
 * only as a verifier, bound to the claiming connection, and gone when that connection is.
 */
export class SessionControl {
  readonly #options: SessionControlOptions;
  readonly #live = new Map<string, LiveSession>();
  /** Sessions each connection controls or closed, so a disconnect ends exactly those. */
  readonly #byConnection = new WeakMap<Connection, Set<string>>();
  readonly #controlStartedListeners: Array<(sessionId: string) => void> = [];
  readonly #controlEndedListeners: Array<(sessionId: string) => void> = [];
  #snapshot: ((sessionId: string, connection: Connection) => ClaimSnapshot) | undefined;
  #controlHold: (sessionId: string) => Promise<void> | null = () => null;

  /** Each session's workspace, pinned. */
  readonly workspaces: WorkspacePins;

  constructor(options: SessionControlOptions) {
    this.#options = options;
    this.workspaces = new WorkspacePins(options.history, options.hidden);
    this.#snapshot = options.snapshot;
  }

  create(checked: CheckedWorkspace, title: string | null): { session_id: string; workspace: string } {
    const now = this.#options.clock.wallNow();
    const sessionId = newId('ses');
    const { workspace, real } = checked;
    this.#options.history.createSession(
      { session_id: sessionId, workspace, workspace_real: real, title, created_at: now, updated_at: now },
      { kind: 'session.created', created_at: now, data: { title } },
    );
    this.workspaces.pin(sessionId, checked);
    return { session_id: sessionId, workspace };
  }

  claim(
    sessionId: string,
    connection: Connection,
  ): { control_token: string; grant_generation: number; snapshot: ClaimSnapshot } {
    const { history, clock } = this.#options;
    if (!history.session(sessionId)) throw new WireError('unknown_session');
    const generation = history.nextGrantGeneration(sessionId, clock.wallNow());
    const token = newSecret();
    const live = this.#liveSession(sessionId);
    const previous = live.controller;
    live.controller = { connection, verifier: verifierOf(token), generation };
    live.closedBy = null;
    if (previous && previous.connection !== connection) {
      this.#options.revoked(previous.connection, sessionId, previous.generation);
    }
    this.#track(connection, sessionId);
    for (const listener of this.#controlStartedListeners) listener(sessionId);
    const snapshot = this.#snapshot?.(sessionId, connection) ?? { turn: null, terminal: null };
    return { control_token: token, grant_generation: generation, snapshot };
  }

  /** The grant a request proves with its token on its connection, or a refusal. */
  authorize(sessionId: string, token: string | null, connection: Connection): Grant {
    const controller = this.#controllerOf(sessionId);
    if (!controller || controller.connection !== connection || !matchesVerifier(token, controller.verifier)) {
      throw new WireError('unauthorized');
    }
    return { sessionId, connection, generation: controller.generation };
  }

  /** Whether `token` on `connection` is the session's current control, without refusing anything. */
  controls(sessionId: string, token: string | null, connection: Connection): boolean {
    const controller = this.#live.get(sessionId)?.controller;
    return controller?.connection === connection && matchesVerifier(token, controller.verifier);
  }

  /**
   * Whether `token` on `connection` is the session's current control, or the token that closed it (which
   * may repeat its close), without refusing anything: the right a session's recovery methods are sent by.
   */
  holds(sessionId: string, token: string | null, connection: Connection): boolean {
    if (this.controls(sessionId, token, connection)) return true;
    const closedBy = this.#live.get(sessionId)?.closedBy;
    return closedBy?.connection === connection && matchesVerifier(token, closedBy.verifier);
  }

  /**
   * Ends the grant's control, once the work that holds the session's control (its title being made) has
   * ended; refuses with `unauthorized` when the grant was superseded meanwhile.
   */
  async release(grant: Grant): Promise<void> {
    await this.#controlHold(grant.sessionId);
    if (!this.#isCurrent(grant)) throw new WireError('unauthorized');
    this.#endControl(grant.sessionId);
  }

  /**
   * Ends the caller's control. Repeating the close with the token that closed the session answers
   * `closed` again; that token authorizes nothing else. (A close that must cancel an active turn
   * answers `closing`: the route decides that with the turns.)
   */
  close(sessionId: string, token: string | null, connection: Connection): 'closed' {
    const live = this.#live.get(sessionId);
    const closedBy = live?.closedBy;
    if (closedBy && closedBy.connection === connection && matchesVerifier(token, closedBy.verifier))
      return 'closed';
    const grant = this.authorize(sessionId, token, connection);
    const verifier = this.#live.get(sessionId)!.controller!.verifier;
    this.#endControl(grant.sessionId);
    // The closing connection is tracked since its claim, so its disconnect forgets the closing token.
    this.#liveSession(sessionId).closedBy = { connection, verifier };
    const now = this.#options.clock.wallNow();
    this.#options.history.appendRecord(sessionId, { kind: 'session.closed', created_at: now, data: {} });
    return 'closed';
  }

  /** The session's current controller: its connection and grant generation, or null. */
  controller(sessionId: string): { connection: Connection; generation: number } | null {
    const controller = this.#live.get(sessionId)?.controller;
    return controller ? { connection: controller.connection, generation: controller.generation } : null;
  }

  /**
   * Where release and disconnect learn of work that must end before a session's control is let go (a
   * title being made): a promise of its end, or null when there is none.
   */
  provideControlHold(hold: (sessionId: string) => Promise<void> | null): void {
    this.#controlHold = hold;
  }

  /** Where claims find the snapshot of a session's active turn and last terminal. */
  provideSnapshot(snapshot: (sessionId: string, connection: Connection) => ClaimSnapshot): void {
    this.#snapshot = snapshot;
  }

  isClaimed(sessionId: string): boolean {
    return this.#live.get(sessionId)?.controller != null;
  }

  /** The sessions with a controller now. */
  claimedSessionIds(): string[] {
    return [...this.#live].filter(([, live]) => live.controller).map(([sessionId]) => sessionId);
  }

  get claimedCount(): number {
    let count = 0;
    for (const live of this.#live.values()) if (live.controller) count++;
    return count;
  }

  /** Calls `listener` on every claim, a takeover included. */
  onControlStarted(listener: (sessionId: string) => void): void {
    this.#controlStartedListeners.push(listener);
  }

  /** Calls `listener` whenever a session stops having a controller (release, close, disconnect). */
  onControlEnded(listener: (sessionId: string) => void): void {
    this.#controlEndedListeners.push(listener);
  }

  #isCurrent(grant: Grant): boolean {
    const controller = this.#live.get(grant.sessionId)?.controller;
    return controller?.connection === grant.connection && controller.generation === grant.generation;
  }

  #controllerOf(sessionId: string): Controller | null {
    const controller = this.#live.get(sessionId)?.controller;
    if (controller) return controller;
    if (!this.#options.history.session(sessionId)) throw new WireError('unknown_session');
    return null;
  }

  #liveSession(sessionId: string): LiveSession {
    let live = this.#live.get(sessionId);
    if (!live) {
      live = { controller: null, closedBy: null };
      this.#live.set(sessionId, live);
    }
    return live;
  }

  #endControl(sessionId: string): void {
    const live = this.#live.get(sessionId);
    if (!live?.controller) return;
    live.controller = null;
    if (!live.closedBy) this.#live.delete(sessionId);
    for (const listener of this.#controlEndedListeners) listener(sessionId);
  }

  #track(connection: Connection, sessionId: string): void {
    let sessions = this.#byConnection.get(connection);
    if (!sessions) {
      const tracked = new Set<string>();
      sessions = tracked;
      this.#byConnection.set(connection, tracked);
      connection.onClose(() => {
        for (const id of tracked) this.#connectionClosed(id, connection);
      });
    }
    sessions.add(sessionId);
  }

  #connectionClosed(sessionId: string, connection: Connection): void {
    const live = this.#live.get(sessionId);
    if (!live) return;
    if (live.closedBy?.connection === connection) live.closedBy = null;
    if (live.controller?.connection === connection) this.#disconnected(sessionId, live.controller);
    else if (!live.controller && !live.closedBy) this.#live.delete(sessionId);
  }

  /** A controller's connection closed: its control ends, after what holds the session's control. */
  #disconnected(sessionId: string, controller: Controller): void {
    const hold = this.#controlHold(sessionId);
    if (!hold) {
      this.#endControl(sessionId);
      return;
    }
    void hold.then(() => {
      // A claim meanwhile took the session over: that control is not this connection's to end.
      if (this.#live.get(sessionId)?.controller === controller) this.#endControl(sessionId);
    });
  }
}
