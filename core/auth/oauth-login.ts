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
  #running: RunningLogin | null = null;

  constructor(options: OAuthLoginOptions) {
    this.#options = options;
  }

  get running(): RunningLogin | null {
    return this.#running;
  }

  /**
   * Starts a flow for `requester`; `end` runs once it has ended (the login admission is let go). Its events
   * are held until `progress.open()`, which the route calls once the acceptance has been written.
   */
  start(requester: LoginRequester, end: () => void): RunningLogin {
    const loginId = newId('login');
    const progress = new LoginProgress((event) => requester.deliver(loginId, event));
    const flow = new LoginFlow({
      ...this.#options,
      progress: (event) => progress.push(event),
    });
    const running: RunningLogin = { loginId, connectionId: requester.connectionId, flow, progress };
    this.#running = running;
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

  /** Cancels the running login; false when there is none or its commit has begun. */
  cancel(): boolean {
    return this.#running?.flow.cancel() ?? false;
  }

  /** The requesting connection is gone: its login is cancelled and its events are dropped. */
  connectionClosed(connectionId: string): void {
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
