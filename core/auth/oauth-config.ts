/** Five minutes: how long a login waits for the browser's redirect unless `login_timeout_ms` says otherwise. */
export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

/** How the authorization server is found: by its issuer's discovery document, or by its two endpoints. */
export type AuthorizationServerSource =
  | { readonly kind: 'discovery'; readonly issuer: URL }
  | {
      readonly kind: 'explicit';
      /** The issuer an id token from the server must name: the configured one as written, else the token endpoint's origin. */
      readonly issuer: string;
      readonly authorizationEndpoint: URL;
      readonly tokenEndpoint: URL;
    };

/** The checked `provider.oauth` of `config.json`. */
export interface OAuthConfig {
  readonly server: AuthorizationServerSource;
  readonly clientId: string;
  readonly scopes: readonly string[];
  /** Extra members of the authorization request (`audience`, `prompt`…); never the ones the flow sets itself. */
  readonly authorizationParameters: Readonly<Record<string, string>>;
  readonly loginTimeoutMs: number;
}

/** What a config file wrote under `provider.oauth` (already shape-checked by `config/config-file.ts`). */
export interface OAuthSettings {
  readonly issuer?: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
  readonly client_id: string;
  readonly scopes?: readonly string[];
  readonly authorization_parameters?: Readonly<Record<string, string>>;
  readonly login_timeout_ms?: number;
}

/** A `provider.oauth` the daemon cannot use; the message names the field, never its value. */
export class OAuthConfigError extends Error {
  override readonly name = 'OAuthConfigError';
  readonly pointer: string;

  constructor(pointer: string, problem: string) {
    super(`${pointer} ${problem}`);
    this.pointer = pointer;
  }
}

/** Parameters the flow sets itself: configuring one would weaken or break the flow. */
const FLOW_PARAMETERS = new Set([
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
]);

const POINTER = '/provider/oauth';

/** Checks the section: the server's URLs, and no parameter that the flow owns. */
export function readOAuthConfig(settings: OAuthSettings): OAuthConfig {
  const issuer = settings.issuer === undefined ? null : serverUrl(settings.issuer, 'issuer');
  const hasEndpoints = settings.authorization_endpoint !== undefined || settings.token_endpoint !== undefined;
  let server: AuthorizationServerSource;
  if (hasEndpoints) {
    if (settings.authorization_endpoint === undefined || settings.token_endpoint === undefined) {
      throw new OAuthConfigError(POINTER, 'needs both authorization_endpoint and token_endpoint');
    }
    const tokenEndpoint = serverUrl(settings.token_endpoint, 'token_endpoint');
    server = {
      kind: 'explicit',
      issuer: issuer === null ? tokenEndpoint.origin : settings.issuer!,
      authorizationEndpoint: serverUrl(settings.authorization_endpoint, 'authorization_endpoint'),
      tokenEndpoint,
    };
  } else if (issuer !== null) {
    server = { kind: 'discovery', issuer };
  } else {
    throw new OAuthConfigError(POINTER, 'needs an issuer or both authorization_endpoint and token_endpoint');
  }
  const parameters = settings.authorization_parameters ?? {};
  for (const name of Object.keys(parameters)) {
    if (FLOW_PARAMETERS.has(name)) {
      throw new OAuthConfigError(
        `${POINTER}/authorization_parameters`,
        'sets a parameter the login sets itself',
      );
    }
  }
  return {
    server,
    clientId: settings.client_id,
    scopes: [...(settings.scopes ?? [])],
    authorizationParameters: { ...parameters },
    loginTimeoutMs: settings.login_timeout_ms ?? DEFAULT_LOGIN_TIMEOUT_MS,
  };
}

/**
 * An https URL, or an http one on a loopback host (a server on the same machine, where nothing is on the
 * wire to protect); without a fragment, user or password.
 */
function serverUrl(text: string, field: string): URL {
  const pointer = `${POINTER}/${field}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OAuthConfigError(pointer, 'is not a URL');
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') {
    throw new OAuthConfigError(pointer, 'must not carry credentials or a fragment');
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new OAuthConfigError(pointer, 'must be https (http only on a loopback address)');
}

export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}
