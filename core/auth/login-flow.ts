import { type Clock, type Deadline, deadlineAt } from '../clock.js';
import type { LoginOutcome, LoginProgressEvent } from './login-progress.js';
import { type AuthorizationRequest, type OAuthClient, OAuthFailure, type TokenSet } from './oauth-client.js';

/** The redirect listener a flow opens for its lifetime (`LoopbackCallback` in the daemon). */
export interface CallbackListener {
  readonly redirectUri: string;
  close(): Promise<void>;
}

export interface LoginFlowOptions {
  client: Pick<OAuthClient, 'authorizationRequest' | 'callbackParameters' | 'exchange'>;
  clock: Clock;
  /** From the start of the flow until a callback must have arrived. */
  timeoutMs: number;
  /** Opens the redirect listener; each callback it receives is handed to `onCallback`. */
  openListener(onCallback: (url: URL) => void): Promise<CallbackListener>;
  /**
   * Makes the tokens the daemon's credential: durably, atomically, and out of reach of cancellation
   * once begun (the flow waits for it, whatever is asked of it meanwhile).
   */
  commit(tokens: TokenSet): Promise<void>;
  progress(event: LoginProgressEvent): void;
}

/** Where the flow is; each step moves forward only. */
type Step = 'starting' | 'waiting' | 'exchanging' | 'committing' | 'ended';

class Cancelled extends Error {
  constructor(readonly outcome: 'cancelled' | 'expired') {
    super(outcome);
  }
}

/**
 * One OAuth login: the redirect listener and the authorization request, then the wait for the callback
 * (from the listener or handed in by `callback`), the code exchange, and the commit of the tokens.
 *
 * Cancellation is protected: before the commit begins, `cancel()` aborts whatever the flow waits on (a
 * discovery, the browser, the token request) and the flow ends `cancelled` with the credential untouched;
 * once the commit has begun, it is too late and the flow ends with the commit's outcome, so the credential
 * file is always the old one or the new one. The flow's secrets (state, verifier, code, tokens) live only
 * in its own locals and are never part of an event but the one URL.
 */
export class LoginFlow {
  readonly #options: LoginFlowOptions;
  readonly #abort = new AbortController();
  readonly #finished: Promise<LoginOutcome>;
  #step: Step = 'starting';
  #deadline: Deadline | null = null;
  #deliverCallback: ((url: URL) => void) | null = null;
  #outcome: LoginOutcome | null = null;

  constructor(options: LoginFlowOptions) {
    this.#options = options;
    this.#finished = this.#run();
  }

  /** Settles once the flow has ended and its listener is closed; never rejects. */
  get finished(): Promise<LoginOutcome> {
    return this.#finished;
  }

  get step(): Step {
    return this.#step;
  }

  get outcome(): LoginOutcome | null {
    return this.#outcome;
  }

  /**
   * A callback URL pasted by the user; false when the flow is not waiting for one (it has one already,
   * or has not yet shown its URL, or has ended).
   */
  callback(url: URL): boolean {
    const deliver = this.#deliverCallback;
    if (this.#step !== 'waiting' || deliver === null) return false;
    this.#deliverCallback = null;
    deliver(url);
    return true;
  }

  /** Cancels the flow unless its commit has begun; returns whether it will end `cancelled`. */
  cancel(): boolean {
    return this.#stop('cancelled');
  }

  #stop(outcome: 'cancelled' | 'expired'): boolean {
    if (this.#step === 'committing' || this.#step === 'ended' || this.#abort.signal.aborted) return false;
    this.#abort.abort(new Cancelled(outcome));
    return true;
  }

  async #run(): Promise<LoginOutcome> {
    const { clock, timeoutMs } = this.#options;
    const signal = this.#abort.signal;
    this.#deadline = deadlineAt(clock, clock.now() + timeoutMs, () => this.#stop('expired'));
    let listener: CallbackListener | null = null;
    let outcome: LoginOutcome;
    try {
      const callback = new Promise<URL>((resolve) => {
        this.#deliverCallback = resolve;
      });
      listener = await this.#untilAborted(
        this.#options.openListener((url) => this.callback(url)),
        signal,
      );
      const request = await this.#options.client.authorizationRequest(listener.redirectUri, signal);
      this.#throwIfAborted();
      this.#options.progress({
        state: 'authorization_url',
        authorization_url: request.url.href,
        expires_in_ms: Math.max(0, Math.ceil(this.#deadline.at - clock.now())),
      });
      this.#step = 'waiting';
      this.#options.progress({ state: 'waiting' });
      const callbackUrl = await this.#untilAborted(callback, signal);
      this.#step = 'exchanging';
      this.#deadline.cancel();
      // The browser's redirect has been taken: nothing more is to come to the listener.
      void listener.close();
      this.#options.progress({ state: 'exchanging' });
      const tokens = await this.#exchange(request, callbackUrl, signal);
      this.#throwIfAborted();
      this.#step = 'committing';
      try {
        await this.#options.commit(tokens);
      } catch {
        throw new OAuthFailure('storage_failed');
      }
      outcome = { state: 'completed' };
    } catch (error) {
      outcome = outcomeOf(error);
    } finally {
      this.#deadline?.cancel();
      this.#deliverCallback = null;
    }
    this.#step = 'ended';
    this.#outcome = outcome;
    if (listener !== null) await listener.close();
    this.#options.progress(outcome);
    return outcome;
  }

  async #exchange(request: AuthorizationRequest, callbackUrl: URL, signal: AbortSignal): Promise<TokenSet> {
    const parameters = this.#options.client.callbackParameters(request, callbackUrl);
    return this.#options.client.exchange(request, parameters, signal);
  }

  #throwIfAborted(): void {
    if (this.#abort.signal.aborted) throw this.#abort.signal.reason;
  }

  /** Whatever `promise` resolves to, unless the flow is aborted first. */
  #untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          if (signal.aborted) {
            // Opened after the abort: a listener is closed at once rather than left open.
            closeIfListener(value);
            reject(signal.reason);
          } else resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }
}

function closeIfListener(value: unknown): void {
  const close = (value as Partial<CallbackListener> | null)?.close;
  if (typeof close === 'function') void close.call(value);
}

/** Only fixed codes leave the flow: an error of anything else is a failed exchange, never its message. */
function outcomeOf(error: unknown): LoginOutcome {
  if (error instanceof Cancelled) return { state: error.outcome };
  if (error instanceof OAuthFailure) return { state: 'failed', code: error.code };
  return { state: 'failed', code: 'exchange_failed' };
}
