import { timingSafeEqual } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { type Clock, deadlineAt } from '../clock.js';
import { isLoopbackHost, type OAuthConfig } from './oauth-config.js';

/**
 * Why a login or a refresh failed, as the wire says it: fixed codes, never the server's own words, which
 * could quote what was sent.
 */
export type OAuthFailureCode =
  /** The authorization server could not be reached, or took longer than its deadline. */
  | 'server_unreachable'
  /** The issuer's discovery document is missing or not one the daemon can use. */
  | 'discovery_failed'
  /** The callback's `state` is not the flow's. */
  | 'state_mismatch'
  /** The server redirected back with an error (the user declined, or the request was refused). */
  | 'authorization_denied'
  /** The callback URL is not one the flow can read (no code, the wrong redirect address…). */
  | 'invalid_callback'
  /** The token endpoint refused the code or answered something that is not a usable token. */
  | 'exchange_failed'
  /** The token endpoint refused the refresh token or answered something unusable. */
  | 'refresh_failed'
  /** The tokens could not be written to the home; the credential is the one before the login. */
  | 'storage_failed';

export class OAuthFailure extends Error {
  override readonly name = 'OAuthFailure';
  readonly code: OAuthFailureCode;

  constructor(code: OAuthFailureCode) {
    super(`the OAuth ${code.replaceAll('_', ' ')}`);
    this.code = code;
  }
}

/** Tokens as the daemon keeps them; `expiresAt` is wall-clock epoch milliseconds, null when the server said none. */
export interface TokenSet {
  readonly accessToken: string;
  readonly refreshToken: string | null;
  readonly expiresAt: number | null;
}

/** The parameters of one authorization request, which only the flow that made it holds. */
export interface AuthorizationRequest {
  readonly url: URL;
  readonly state: string;
  readonly verifier: string;
  readonly redirectUri: string;
}

/** Each request to the authorization server ends by this deadline. */
export const SERVER_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The OAuth 2.0 client of the daemon, over `oauth4webapi`: discovery (RFC 8414 / OpenID), the
 * authorization-code grant with PKCE S256 (RFC 7636) for a public client, and the refresh-token grant. It
 * holds no secret of its own: the verifier and state live in the `AuthorizationRequest` it hands out.
 */
export class OAuthClient {
  readonly #config: OAuthConfig;
  readonly #clock: Clock;
  readonly #client: oauth.Client;
  #server: oauth.AuthorizationServer | null = null;

  constructor(config: OAuthConfig, clock: Clock) {
    this.#config = config;
    this.#clock = clock;
    this.#client = { client_id: config.clientId };
    const { server } = config;
    if (server.kind === 'explicit') {
      this.#server = {
        issuer: server.issuer,
        authorization_endpoint: server.authorizationEndpoint.href,
        token_endpoint: server.tokenEndpoint.href,
      };
    }
  }

  /** Builds the authorization URL for `redirectUri`, discovering the server first if need be. */
  async authorizationRequest(redirectUri: string, signal: AbortSignal): Promise<AuthorizationRequest> {
    const server = await this.#authorizationServer(signal);
    // The browser is sent there: https, or http on this machine only, whatever a metadata document says.
    const endpoint = server.authorization_endpoint;
    if (endpoint === undefined || !(isHttps(endpoint) || isLoopbackHttp(endpoint))) {
      throw new OAuthFailure('discovery_failed');
    }
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(endpoint);
    for (const [name, value] of Object.entries(this.#config.authorizationParameters)) {
      url.searchParams.set(name, value);
    }
    url.searchParams.set('client_id', this.#config.clientId);
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('response_type', 'code');
    if (this.#config.scopes.length > 0) url.searchParams.set('scope', this.#config.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { url, state, verifier, redirectUri };
  }

  /**
   * Reads the redirect back from the browser: its `state` must be the request's (compared in constant
   * time), and it must carry a code and no error.
   */
  callbackParameters(request: AuthorizationRequest, callback: URL): URLSearchParams {
    const state = callback.searchParams.get('state');
    if (state === null || !sameText(state, request.state)) throw new OAuthFailure('state_mismatch');
    const expected = new URL(request.redirectUri);
    if (callback.origin !== expected.origin || callback.pathname !== expected.pathname) {
      throw new OAuthFailure('invalid_callback');
    }
    try {
      return oauth.validateAuthResponse(this.#server!, this.#client, callback.searchParams, request.state);
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError) throw new OAuthFailure('authorization_denied');
      throw new OAuthFailure('invalid_callback');
    }
  }

  /** Trades the callback's code for tokens; `signal` aborts the request (a cancelled login). */
  async exchange(
    request: AuthorizationRequest,
    parameters: URLSearchParams,
    signal: AbortSignal,
  ): Promise<TokenSet> {
    const server = this.#server!;
    return this.#tokenRequest('exchange_failed', server, signal, async (options) => {
      const response = await oauth.authorizationCodeGrantRequest(
        server,
        this.#client,
        oauth.None(),
        parameters,
        request.redirectUri,
        request.verifier,
        options,
      );
      return oauth.processAuthorizationCodeResponse(server, this.#client, response);
    });
  }

  /** A fresh access token for `refreshToken`; a server that sends no new refresh token keeps the old one. */
  async refresh(refreshToken: string, signal: AbortSignal): Promise<TokenSet> {
    const server = await this.#authorizationServer(signal, 'refresh_failed');
    const tokens = await this.#tokenRequest('refresh_failed', server, signal, async (options) => {
      const response = await oauth.refreshTokenGrantRequest(
        server,
        this.#client,
        oauth.None(),
        refreshToken,
        options,
      );
      return oauth.processRefreshTokenResponse(server, this.#client, response);
    });
    return { ...tokens, refreshToken: tokens.refreshToken ?? refreshToken };
  }

  async #authorizationServer(
    signal: AbortSignal,
    failure: OAuthFailureCode = 'discovery_failed',
  ): Promise<oauth.AuthorizationServer> {
    if (this.#server !== null) return this.#server;
    const { server } = this.#config;
    if (server.kind !== 'discovery') throw new OAuthFailure(failure);
    // RFC 8414's document first, then OpenID Connect's, which many servers publish instead.
    const discovered = await this.#bounded(
      signal,
      failure,
      isLoopbackHttp(server.issuer.href),
      async (options) => {
        const response = await oauth.discoveryRequest(server.issuer, { ...options, algorithm: 'oauth2' });
        if (response.status !== 404) return oauth.processDiscoveryResponse(server.issuer, response);
        await response.body?.cancel();
        const openid = await oauth.discoveryRequest(server.issuer, { ...options, algorithm: 'oidc' });
        return oauth.processDiscoveryResponse(server.issuer, openid);
      },
    );
    this.#server = discovered;
    return discovered;
  }

  async #tokenRequest(
    failure: OAuthFailureCode,
    server: oauth.AuthorizationServer,
    signal: AbortSignal,
    request: (options: oauth.TokenEndpointRequestOptions) => Promise<oauth.TokenEndpointResponse>,
  ): Promise<TokenSet> {
    const insecure = server.token_endpoint !== undefined && isLoopbackHttp(server.token_endpoint);
    const response = await this.#bounded(signal, failure, insecure, request);
    if (response.token_type !== 'bearer') throw new OAuthFailure(failure);
    const expiresIn = response.expires_in;
    return {
      accessToken: response.access_token,
      refreshToken: response.refresh_token ?? null,
      expiresAt:
        typeof expiresIn === 'number' && expiresIn > 0
          ? Math.floor(this.#clock.wallNow() + expiresIn * 1000)
          : null,
    };
  }

  /**
   * Runs one exchange with the server under its deadline and `signal`. An abort by `signal` rethrows its
   * reason; every other failure becomes `failure` (or `server_unreachable` when nothing was answered).
   */
  async #bounded<T>(
    signal: AbortSignal,
    failure: OAuthFailureCode,
    /** Plain http is allowed for a server on a loopback address only; `oauth4webapi` refuses it otherwise. */
    loopbackHttp: boolean,
    run: (options: { signal: AbortSignal; [oauth.allowInsecureRequests]: boolean }) => Promise<T>,
  ): Promise<T> {
    const timeout = new AbortController();
    const deadline = deadlineAt(this.#clock, this.#clock.now() + SERVER_REQUEST_TIMEOUT_MS, () =>
      timeout.abort(),
    );
    try {
      return await run({
        signal: AbortSignal.any([signal, timeout.signal]),
        [oauth.allowInsecureRequests]: loopbackHttp,
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof OAuthFailure) throw error;
      if (timeout.signal.aborted || isNetworkFailure(error)) throw new OAuthFailure('server_unreachable');
      throw new OAuthFailure(failure);
    } finally {
      deadline.cancel();
    }
  }
}

function isHttps(url: string): boolean {
  return URL.canParse(url) && new URL(url).protocol === 'https:';
}

function isLoopbackHttp(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname);
}

function isNetworkFailure(error: unknown): boolean {
  return error instanceof TypeError && !(error instanceof oauth.OperationProcessingError);
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
