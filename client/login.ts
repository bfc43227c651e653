import { EventQueue } from './event-queue.js';
import type { MagiClient } from './magi-client.js';
import { operationId, typedCall } from './typed-call.js';
import type { EventFrame, WireClient } from './wire-client.js';

/** How a login ended (`auth.login_progress`'s terminal, and the login operation's settled result). */
export interface LoginResult {
  login_id: string;
  state: 'completed' | 'failed' | 'cancelled' | 'expired';
  /** The fixed failure code when `state` is `failed` (docs/protocol.md section 16), else null. */
  code: string | null;
}

/** A step of a login before its end. */
export type LoginStep =
  | { state: 'authorization_url'; authorization_url: string; expires_in_ms: number }
  | { state: 'waiting' }
  | { state: 'exchanging' };

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'expired']);

/** The connection closed before the login ended; the daemon cancels a login whose connection goes. */
export class LoginConnectionLost extends Error {
  override readonly name = 'LoginConnectionLost';
  constructor() {
    super('the connection to the daemon closed during the login');
  }
}

/**
 * One OAuth login in progress. Iterate it for its steps (the authorization URL first), or await
 * `authorizationUrl` to open it in a browser and `outcome` for its end. When the browser runs on another
 * machine, hand the address it was sent back to to `callback()`.
 */
export class OAuthLogin implements AsyncIterable<LoginStep> {
  readonly loginId: string;
  /** The URL to open in a browser; it is shown to this connection only, and kept nowhere by the daemon. */
  readonly authorizationUrl: Promise<string>;
  readonly outcome: Promise<LoginResult>;
  readonly #wire: WireClient;
  readonly #steps: EventQueue<LoginStep>;

  /** @internal Built by `login()`. */
  constructor(
    wire: WireClient,
    loginId: string,
    steps: EventQueue<LoginStep>,
    url: Promise<string>,
    outcome: Promise<LoginResult>,
  ) {
    this.#wire = wire;
    this.loginId = loginId;
    this.#steps = steps;
    this.authorizationUrl = url;
    this.outcome = outcome;
  }

  [Symbol.asyncIterator](): AsyncIterator<LoginStep> {
    return this.#steps[Symbol.asyncIterator]();
  }

  /** Hands the pasted callback URL to the daemon; resolves with the login's end. */
  async callback(url: string): Promise<LoginResult> {
    const { auth: _auth, ...result } = await typedCall<LoginResult & { auth: unknown }>(
      this.#wire,
      'auth.login_callback',
      { url },
      { operation: operationId() },
    );
    return result;
  }

  /** Cancels the login; false when it had already ended or was storing its tokens. */
  async cancel(): Promise<boolean> {
    const { cancelled } = await typedCall<{ cancelled: boolean }>(
      this.#wire,
      'auth.cancel',
      {},
      { operation: operationId() },
    );
    return cancelled;
  }
}

/**
 * Starts the daemon's OAuth login (`auth.login {method:"oauth"}`, configured by `provider.oauth`). A
 * refusal (`configuration_busy` while another login runs, `conflict` when none is configured) throws
 * `WireCallError`.
 */
export async function login(target: MagiClient | WireClient): Promise<OAuthLogin> {
  const wire = 'wire' in target ? target.wire : target;
  const operation = operationId();
  const steps = new EventQueue<LoginStep>();
  let showUrl: (url: string) => void = () => {};
  let noUrl: (error: Error) => void = () => {};
  const url = new Promise<string>((resolve, reject) => {
    showUrl = resolve;
    noUrl = reject;
  });
  let end: (result: LoginResult) => void = () => {};
  let lost: (error: Error) => void = () => {};
  const outcome = new Promise<LoginResult>((resolve, reject) => {
    end = resolve;
    lost = reject;
  });
  // Whoever awaits only one of them must not see the other's rejection as unhandled.
  url.catch(() => {});
  outcome.catch(() => {});
  const finish = (): void => {
    stopEvents();
    stopClose();
  };
  const stopEvents = wire.onEvent((frame: EventFrame) => {
    if (frame.event !== 'auth.login_progress' || frame.operation_id !== operation) return false;
    const payload = frame.payload as Record<string, unknown> & { state: string };
    if (TERMINAL.has(payload.state)) {
      const result: LoginResult = {
        login_id: String(payload.login_id),
        state: payload.state as LoginResult['state'],
        code: typeof payload.code === 'string' ? payload.code : null,
      };
      noUrl(new Error(`the login ended (${result.state}) before its URL was shown`));
      steps.end();
      end(result);
      finish();
      return true;
    }
    const { login_id: _id, ...step } = payload;
    if (step.state === 'authorization_url') showUrl(String(step.authorization_url));
    steps.push(step as LoginStep);
    return true;
  });
  const stopClose = wire.onClose(() => {
    const error = new LoginConnectionLost();
    noUrl(error);
    steps.fail(error);
    lost(error);
    finish();
  });
  let started: { login_id: string };
  try {
    started = await typedCall<{ login_id: string }>(wire, 'auth.login', { method: 'oauth' }, { operation });
  } catch (error) {
    finish();
    throw error;
  }
  return new OAuthLogin(wire, started.login_id, steps, url, outcome);
}
