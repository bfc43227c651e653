import type { Clock } from '../clock.js';
import { WireError } from '../errors.js';
import { newId } from '../ids.js';
import { type CallbackListener, LoginFlow } from './login-flow.js';
import { type LoginOutcome, LoginProgress, type LoginProgressEvent } from './login-progress.js';
import type { OAuthClient, TokenSet } from './oauth-client.js';

export interface OAuthLoginOptions {
  client: Pick<OAuthClient, 'authorizationRequest' | 'callbackParameters' | 'exchange'>;
  clock: Clock;
  timeoutMs: number;
  openListener(onCallback: (url: URL) => void): Promise<CallbackListener>;
  commit(tokens: TokenSet): Promise<void>;
}

/** Who asked for a login, and where its progress and outcome go. */
export interface LoginRequester {
  readonly connectionId: string;
  deliver(loginId: string, event: LoginProgressEvent): void;
  /** Called once with the flow's outcome, after its terminal event has been queued. */
  settle(loginId: string, outcome: LoginOutcome): void;
}

export interface RunningLogin {
  readonly loginId: string;
  readonly connectionId: string;
  readonly flow: LoginFlow;
  readonly progress: LoginProgress;
}

/** A login admitted and waiting for the configuration worker; it may be cancelled before it starts. */
export interface LoginReservation {
  readonly connectionId: string;
  cancelled: boolean;
}

export const oauthRefusals = {
  notConfigured: () => new WireError('conflict', 'no OAuth login is configured'),
  noLoginWaiting: () => new WireError('conflict', 'no login is waiting for a callback'),
} as const;

/**
 * The OAuth logins of the daemon: at most one runs (the credential store's login admission guarantees it),
 * and this object knows it to hand it a pasted callback, cancel it, or cancel it when its connection goes.
 */
export class OAuthLogins {
  readonly #options: OAuthLoginOptions;
  #pending: LoginReservation | null = null;
  #running: RunningLogin | null = null;

  constructor(options: OAuthLoginOptions) {
    this.#options = options;
  }

  get running(): RunningLogin | null {
    return this.#running;
  }

  /** Holds the place of an admitted login until it starts, so that a cancellation meanwhile is not lost. */
  reserve(connectionId: string): LoginReservation {
    const reservation: LoginReservation = { connectionId, cancelled: false };
    this.#pending = reservation;
    return reservation;
  }

  /** The reserved login will not start (its request failed). */
  release(reservation: LoginReservation): void {
    if (this.#pending === reservation) this.#pending = null;
  }

  /**
   * Starts the reserved flow for `requester`; `end` runs once it has ended (the login admission is let go).
   * Its events are held until `progress.open()`, which the route calls once the acceptance has been
   * written. A reservation cancelled meanwhile starts a flow that ends `cancelled` at once.
   */
  start(reservation: LoginReservation, requester: LoginRequester, end: () => void): RunningLogin {
    this.release(reservation);
    const loginId = newId('login');
    const progress = new LoginProgress((event) => requester.deliver(loginId, event));
    const flow = new LoginFlow({
      ...this.#options,
      progress: (event) => progress.push(event),
    });
    const running: RunningLogin = { loginId, connectionId: requester.connectionId, flow, progress };
    this.#running = running;
    if (reservation.cancelled) flow.cancel();
    void flow.finished.then((outcome) => {
      if (this.#running === running) this.#running = null;
      end();
      requester.settle(loginId, outcome);
    });
    return running;
  }

  /** Hands a pasted callback URL to the login waiting for one. */
  callback(url: URL): RunningLogin {
    const running = this.#running;
    if (running === null || !running.flow.callback(url)) throw oauthRefusals.noLoginWaiting();
    return running;
  }

  /** Cancels the running (or admitted) login; false when there is none or its commit has begun. */
  cancel(): boolean {
    if (this.#running !== null) return this.#running.flow.cancel();
    const pending = this.#pending;
    if (pending === null || pending.cancelled) return false;
    pending.cancelled = true;
    return true;
  }

  /** The requesting connection is gone: its login is cancelled and its events are dropped. */
  connectionClosed(connectionId: string): void {
    if (this.#pending?.connectionId === connectionId) this.#pending.cancelled = true;
    const running = this.#running;
    if (running === null || running.connectionId !== connectionId) return;
    running.progress.close();
    running.flow.cancel();
  }

  /** Cancels the running login and waits for its end (a commit in progress is finished first). */
  async close(): Promise<void> {
    const running = this.#running;
    if (running === null) return;
    running.flow.cancel();
    await running.flow.finished;
  }
}
